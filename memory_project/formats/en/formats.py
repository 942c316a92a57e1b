"""The console's one way of writing a moment: ISO date, 24-hour time, UTC
(TIME_ZONE). The admin's readonly fields and list columns use these formats
(Django's "Nov. 29, 2026, 10:14 a.m." otherwise), so a conversation's page
reads like a job's or a memory's."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i:s"
TIME_FORMAT = "H:i:s"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
