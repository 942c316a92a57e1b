"""The review console on the Django admin: memories and their review queue,
versions and edges, stores, jobs and scope state, and the dashboard."""

from django.contrib import admin

from memories.admin import jobs, memory_items, review, stores, versions  # noqa: F401 - registers the ModelAdmins

admin.site.site_header = "Memory service console"
admin.site.site_title = "Memory console"
admin.site.index_title = "Review and operations"
