"""Orchestration of memory jobs: extract, compact, rebuild, maintenance.

`execute.memory_job_execute` is what the Celery task calls. Every runner follows the
same rhythm: read (no transaction), ask the language model (no transaction),
then one short atomic write that also moves the scope's checkpoint, so that a
job killed at any point leaves either a whole batch or nothing.
"""
