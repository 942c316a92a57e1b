"""The review console on the Django admin: memories and their review queue,
versions and edges, stores, jobs and scope state, and the dashboard."""

from django.contrib import admin

from memories.admin import conversations, jobs, memory_items, review, scopes, stores, versions  # noqa: F401 - registers the ModelAdmins

admin.site.site_header = "Memory service console"
admin.site.site_title = "Memory console"
admin.site.index_title = "Review and operations"
# The index, the header links and the breadcrumbs lead everywhere; the
# sidebar's 300 px are worth more to the lists at a laptop's 1280 px.
admin.site.enable_nav_sidebar = False
# "View site": the service has no pages of its own besides the API's docs.
admin.site.site_url = "/v1/docs/"
