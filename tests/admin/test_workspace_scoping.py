"""Operators see only their workspaces, and every admin page asks the right
permission: a walk over EVERY URL of the admin's URL conf (custom pages
included, so a new page cannot be forgotten), every action and every
autocomplete, as a staff user without permissions, a reviewer, a redactor, a
member of another workspace with every permission, a non-staff user and a
superuser."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, reverse

from accounts.actors import Actor
from accounts.models import ApiKey, WorkspaceMembership
from accounts.services import api_key_create, workspace_membership_add
from conversations.models import Branch, Conversation, Message
from memories.models import MemoryEdge, MemoryItem, MemoryJob, MemoryStore, MemoryVersion, ScopeState
from memories.services.edges import memory_edge_create
from memories.services.items import memory_item_create, memory_item_update
from memories.services.store_memories import store_memory_write
from memories.services.stores import memory_store_create
from tests.factories import WorkspaceFactory

pytestmark = pytest.mark.django_db

VICTIM_NAME = "Victim Corp"
SYSTEM = Actor.system()

# What each admin page needs, by the name of its route ("kind"). A page whose
# kind is not here fails the walk: classify it (and give it its check).
VIEW = "view"
CHANGE = "change"
ADD = "add"
DELETE = "delete"
REDACT = "redact"
PAGE_NEEDS: dict[str, frozenset[str]] = {
    "changelist": frozenset({VIEW}),
    "add": frozenset({ADD}),
    "change": frozenset({VIEW}),
    "history": frozenset({VIEW}),
    "delete": frozenset({DELETE}),
    "object": frozenset({VIEW}),  # the unnamed `<id>/` redirect to the change page
    "source": frozenset({VIEW}),
    "restore": frozenset({CHANGE}),
    "redact_version": frozenset({VIEW, REDACT}),
    "redact_and_replace": frozenset({CHANGE, REDACT}),
    "redact_everywhere": frozenset({CHANGE, REDACT}),
    "decide": frozenset({CHANGE}),
    "dashboard": frozenset({VIEW}),
    "password_change": frozenset({CHANGE}),  # auth's user password page
}
# What a POST to the page needs, where more than a GET.
POST_NEEDS = {"change": frozenset({CHANGE})}
SITE_PAGES = {"index", "login", "logout", "password_change", "password_change_done", "jsi18n", "app_list"}


@dataclass
class Route:
    template: str
    name: str | None
    app_label: str | None = None
    model_name: str | None = None

    @property
    def kind(self) -> str:
        if self.name == "memories_dashboard":
            return "dashboard"
        if self.model_name is None:
            return self.name or "catch_all"
        if self.name is None:
            return "object"
        return self.name.removeprefix(f"{self.app_label}_{self.model_name}_")


def admin_routes() -> list[Route]:
    """Every route of the admin site, with the model admin it belongs to."""
    registry = {(m._meta.app_label, m._meta.model_name) for m in admin.site._registry}
    routes: list[Route] = []

    def walk(patterns, prefix: str, owner: tuple[str, str] | None):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                route = prefix + str(pattern.pattern)
                parts = tuple(route.strip("/").split("/"))
                walk(pattern.url_patterns, route, parts if parts in registry else owner)
            elif isinstance(pattern, URLPattern):
                app_label, model_name = owner or (None, None)
                routes.append(Route(prefix + str(pattern.pattern), pattern.name, app_label, model_name))

    walk(admin.site.get_urls(), "", None)
    return routes


@dataclass
class Role:
    name: str
    client: Client
    user: object
    member: bool
    perms: set[str] = field(default_factory=set)

    def can(self, app_label: str, model_name: str, needs: frozenset[str]) -> bool:
        if self.user.is_superuser:
            return True
        for need in needs:
            if need == REDACT:
                ok = "memories.redact_memoryversion" in self.perms
            elif need == VIEW:
                ok = bool({f"{app_label}.view_{model_name}", f"{app_label}.change_{model_name}"} & self.perms)
            else:
                ok = f"{app_label}.{need}_{model_name}" in self.perms
            if not ok:
                return False
        return True


@dataclass
class World:
    victim: object
    home: object
    objects: dict[tuple[str, str], object]
    versions: dict[tuple[str, str], str]
    marks: set[str]


def _messages(workspace, conversation, branch) -> None:
    for floor in (1, 2):
        Message.objects.create(
            workspace=workspace, conversation=conversation, branch=branch, floor_no=floor, role="user", content="hi"
        )


def build_workspace(name: str, slug: str, tag: str) -> tuple[object, dict, dict]:
    workspace = WorkspaceFactory(name=name, slug=slug, requires_review=True)
    conversation = Conversation.objects.create(workspace=workspace, external_id=f"{tag}-chat", message_count=2)
    branch = Branch.objects.create(conversation=conversation, name="main", next_floor_no=3)
    _messages(workspace, conversation, branch)
    message = Message.objects.filter(conversation=conversation).order_by("floor_no").first()
    active = memory_item_create(
        workspace=workspace, actor=SYSTEM, scope="chat", scope_id=f"{tag}-chat", type="fact",
        content=f"{tag} likes tea", source_message_id=message.pk,
    )
    memory_item_update(workspace=workspace, actor=SYSTEM, memory_id=active.pk, changes={"content": f"{tag} likes green tea"})
    pending = memory_item_create(
        workspace=workspace, actor=SYSTEM, scope="chat", scope_id=f"{tag}-chat", type="fact",
        content=f"{tag} is allergic to nuts", lifecycle_status="pending", source_message_id=message.pk,
    )
    memory_item_update(workspace=workspace, actor=SYSTEM, memory_id=pending.pk, changes={"importance": 0.9})
    store = memory_store_create(workspace=workspace, name=f"{tag} store")
    store_memory_write(workspace=workspace, store_id=store.pk, path="/notes/a.md", content=f"{tag} doc", actor=SYSTEM)
    edge = memory_edge_create(workspace=workspace, from_id=active.pk, to_id=pending.pk, relation="supports")
    job = MemoryJob.objects.create(
        workspace=workspace, kind="extract", scope="chat", scope_id=f"{tag}-chat", status="failed", error="boom"
    )
    state = ScopeState.objects.create(workspace=workspace, scope="chat", scope_id=f"{tag}-chat", conversation=conversation)
    key = api_key_create(workspace=workspace, name=f"{tag} key").api_key
    objects = {
        ("accounts", "workspace"): workspace,
        ("accounts", "apikey"): key,
        ("memories", "memoryitem"): active,
        ("memories", "reviewitem"): pending,
        ("memories", "memorystore"): store,
        ("memories", "memoryversion"): MemoryVersion.objects.get(memory_id=active.pk, version=1),
        ("memories", "memoryedge"): edge,
        ("memories", "memoryjob"): job,
        ("memories", "scopestate"): state,
        ("conversations", "conversation"): conversation,
        ("conversations", "branch"): branch,
    }
    versions = {
        ("memories", "memoryitem"): MemoryVersion.objects.get(memory_id=active.pk, version=1).pk,
        ("memories", "reviewitem"): MemoryVersion.objects.get(memory_id=pending.pk, version=1).pk,
    }
    return workspace, objects, versions


@pytest.fixture
def world(django_user_model) -> World:
    victim, objects, versions = build_workspace(VICTIM_NAME, "victim", "victim")
    home, _home_objects, _ = build_workspace("Home Corp", "home", "home")
    helper = django_user_model.objects.create_user("victim-operator", password="x", is_staff=True)
    objects[("accounts", "workspacemembership")] = workspace_membership_add(user=helper, workspace=victim)
    objects[("auth", "user")] = helper
    objects[("auth", "group")] = Group.objects.create(name="victim-reviewers")
    marks = {obj.pk for obj in objects.values() if isinstance(obj.pk, str)} | {"victim-chat", "victim store"}
    return World(victim, home, objects, versions, marks)


def _perms(codenames: list[str]) -> set[Permission]:
    return set(Permission.objects.filter(codename__in=codenames, content_type__app_label="memories"))


@pytest.fixture
def roles(world, django_user_model) -> dict[str, Role]:
    app_perms = Permission.objects.filter(content_type__app_label__in=["accounts", "memories", "conversations"])
    spec = {
        "nobody": (True, set()),
        "reviewer": (True, _perms(["view_reviewitem", "change_reviewitem"])),
        "redactor": (True, _perms(["view_memoryitem", "view_memoryversion", "redact_memoryversion"])),
        "outsider": (False, set(app_perms)),
    }
    out = {}
    for name, (member, permissions) in spec.items():
        user = django_user_model.objects.create_user(name, password="x", is_staff=True)
        user.user_permissions.set(permissions)
        workspace_membership_add(user=user, workspace=world.victim if member else world.home)
        user = django_user_model.objects.get(pk=user.pk)  # fresh permission cache
        client = Client()
        client.force_login(user)
        out[name] = Role(name, client, user, member, set(user.get_all_permissions()))
    return out


def concrete_url(route: Route, world: World) -> str:
    """The route with the victim's object (and version) filled in."""
    key = (route.app_label, route.model_name)

    def value(name: str) -> str:
        if name == "object_id" or (name == "id" and route.model_name == "user"):
            return quote(str(world.objects[key].pk))
        if name == "version_id":
            return world.versions[key]
        if name == "content_type_id":
            return str(ContentType.objects.get_for_model(MemoryItem).pk)
        if name == "app_label":
            return "memories"
        if name == "url":
            return "no-such-page/"
        raise AssertionError(f"The admin walk has no value for <{name}> in {route.template!r}: add one.")

    url = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: value(m.group(1)), route.template)
    url = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: value(m.group(1)), url)
    return "/admin/" + url.lstrip("^").rstrip("$")


def _object_url_for_view_on_site(world: World) -> str:
    content_type = ContentType.objects.get_for_model(MemoryItem).pk
    return f"/admin/r/{content_type}/{quote(world.objects[('memories', 'memoryitem')].pk)}/"


def snapshot(world: World) -> tuple:
    """What any forbidden request must leave as it was."""
    ws = world.victim
    return (
        sorted(MemoryItem.objects.filter(workspace=ws).values_list("pk", "version", "status", "lifecycle_status", "content")),
        MemoryVersion.objects.filter(workspace=ws, redacted_at__isnull=False).count(),
        MemoryVersion.objects.filter(workspace=ws).count(),
        sorted(MemoryStore.objects.filter(workspace=ws).values_list("pk", "name", "archived_at")),
        MemoryEdge.objects.filter(workspace=ws).count(),
        sorted(MemoryJob.objects.filter(workspace=ws).values_list("pk", "status", "attempts")),
        sorted(ScopeState.objects.filter(workspace=ws).values_list("pk", "micro_count", "updated_at")),
        sorted(ApiKey.objects.filter(workspace=ws).values_list("pk", "name", "revoked_at", "read_only")),
        WorkspaceMembership.objects.filter(workspace=ws).count(),
        Conversation.objects.filter(workspace=ws).count(),
        (ws.__class__.objects.filter(pk=ws.pk).values_list("name", "requires_review").first()),
        Group.objects.count(),
    )


def test_the_walk_knows_every_admin_page():
    routes = admin_routes()
    unknown = sorted(
        {r.kind for r in routes if r.model_name is not None and r.kind not in PAGE_NEEDS}
        | {r.kind for r in routes if r.model_name is None and r.kind not in SITE_PAGES | {"autocomplete", "view_on_site", "catch_all"}}
    )
    assert unknown == [], f"classify these admin pages in PAGE_NEEDS: {unknown}"
    custom = {r.kind for r in routes if r.model_name == "memoryitem"}
    assert {"source", "restore", "redact_version", "redact_and_replace", "dashboard"} <= custom


def test_every_admin_page_refuses_what_a_role_may_not_do(world, roles):
    before = snapshot(world)
    checked = 0
    for route in admin_routes():
        if route.model_name is None:
            continue
        url = concrete_url(route, world)
        needs = PAGE_NEEDS[route.kind]
        for role in roles.values():
            is_object_page = "<" in route.template
            reachable = (role.member or not is_object_page) if route.kind != "dashboard" else True
            get_ok = reachable and role.can(route.app_label, route.model_name if route.kind != "dashboard" else "memoryitem", needs)
            post_ok = get_ok and role.can(route.app_label, route.model_name, POST_NEEDS.get(route.kind, needs))
            if route.kind == "dashboard":
                dashboard = f"{url}?workspace={world.victim.pk}"
                response = role.client.get(dashboard)
                expected_ok = get_ok and role.member
                assert (response.status_code in (403, 404)) != expected_ok, (role.name, dashboard, response.status_code)
                checked += 1
            response = role.client.get(url, follow=True)
            if get_ok:
                assert response.status_code not in (404, 500), (role.name, url, response.status_code)
            else:
                assert response.status_code in (403, 404), (role.name, "GET", url, response.status_code)
            if not post_ok:
                # The unnamed `<id>/` route only redirects to the change page: follow it.
                data = {"post": "yes", "content": "x", "confirmed": "True"}
                response = role.client.post(url, data, follow=route.kind == "object")
                assert response.status_code in (403, 404), (role.name, "POST", url, response.status_code)
            checked += 1
    assert snapshot(world) == before
    assert checked > 300


def test_superuser_reaches_every_page(world, admin_client):
    """The walk's URLs are real: the superuser opens each (none is 404)."""
    for route in admin_routes():
        if route.model_name is None:
            continue
        url = concrete_url(route, world)
        response = admin_client.get(url, follow=True)
        assert response.status_code not in (404, 500), (url, response.status_code)


def test_site_pages_and_non_staff(world, roles, django_user_model):
    plain = django_user_model.objects.create_user("plain", password="x")
    non_staff, anonymous = Client(), Client()
    non_staff.force_login(plain)
    for route in admin_routes():
        if route.name in ("login", "logout"):
            continue
        if route.name == "view_on_site":
            url = _object_url_for_view_on_site(world)
        else:
            url = concrete_url(route, world) if route.model_name else "/admin/" + _site_url(route)
        for client in (non_staff, anonymous):
            response = client.get(url)
            assert response.status_code == 302 and "/admin/login/" in response["Location"], (url, response.status_code)
            assert client.post(url, {"post": "yes"}).status_code in (302, 403), url
    # The shortcut to an object's public page answers nothing for anyone.
    for role in roles.values():
        assert role.client.get(_object_url_for_view_on_site(world)).status_code == 404
    # An app's index exists only for who may see one of its models.
    assert roles["nobody"].client.get("/admin/memories/").status_code == 404


def _site_url(route: Route) -> str:
    if route.name == "app_list":
        return "memories/"
    if route.name is None:
        return "no-such-page/"
    return reverse(f"admin:{route.name}").removeprefix("/admin/")


def _request_for(user):
    request = RequestFactory().get("/admin/")
    request.user = user
    return request


def test_every_action_refuses_other_workspaces_and_missing_permissions(world, roles, admin_user):
    before = snapshot(world)
    checked = 0
    for model, model_admin in admin.site._registry.items():
        key = (model._meta.app_label, model._meta.model_name)
        if key not in world.objects:
            continue
        changelist = reverse(f"admin:{key[0]}_{key[1]}_changelist")
        declared = set(model_admin.get_actions(_request_for(admin_user)))
        target = str(world.objects[key].pk)
        for role in roles.values():
            mine = set(model_admin.get_actions(_request_for(role.user))) if role.member else set()
            for action in declared - mine:
                for confirm in ({}, {"post": "yes"}):
                    data = {"action": action, ACTION_CHECKBOX_NAME: [target], "index": 0, **confirm}
                    response = role.client.post(changelist, data)
                    assert response.status_code in (403, 404), (role.name, key, action, response.status_code)
                    checked += 1
    assert snapshot(world) == before
    assert checked > 40


def test_lists_filters_autocomplete_and_dashboard_show_only_own_workspaces(world, roles):
    outsider = roles["outsider"].client
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in ("accounts", "memories", "conversations"):
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        page = outsider.get(url)
        assert page.status_code == 200, url
        body = page.content.decode()
        leaked = {mark for mark in world.marks | {VICTIM_NAME} if mark in body}
        assert not leaked, (url, leaked)
        for field_name in model_admin.autocomplete_fields:
            response = outsider.get(
                "/admin/autocomplete/",
                {"app_label": model._meta.app_label, "model_name": model._meta.model_name, "field_name": field_name, "term": ""},
            )
            assert response.status_code == 200
            ids = {row["id"] for row in response.json()["results"]}
            assert ids and not (ids & {str(world.victim.pk), *world.marks}), (model, field_name, ids)
            assert roles["nobody"].client.get(
                "/admin/autocomplete/",
                {"app_label": model._meta.app_label, "model_name": model._meta.model_name, "field_name": field_name},
            ).status_code == 403
    # Redacting a text everywhere in another workspace: that workspace is not here.
    before = snapshot(world)
    response = outsider.post(
        reverse("admin:memories_memoryitem_redact_everywhere"),
        {"workspace": world.victim.pk, "text": "victim likes", "confirmed": "True", "post": "yes"},
    )
    assert response.status_code == 404 and snapshot(world) == before
    dashboard = reverse("admin:memories_dashboard")
    body = outsider.get(dashboard).content.decode()
    assert VICTIM_NAME not in body and "Home Corp" in body
    assert outsider.get(dashboard, {"workspace": world.victim.pk}).status_code == 404
    # A filter on another workspace's id finds nothing rather than its rows.
    items = reverse("admin:memories_memoryitem_changelist")
    body = outsider.get(items, {"workspace__id__exact": world.victim.pk}).content.decode()
    assert world.objects[("memories", "memoryitem")].pk not in body


def test_member_sees_own_workspace_and_superuser_sees_all(world, roles, admin_client):
    redactor = roles["redactor"].client
    body = redactor.get(reverse("admin:memories_memoryitem_changelist")).content.decode()
    assert world.objects[("memories", "memoryitem")].pk in body and "home likes" not in body
    body = admin_client.get(reverse("admin:memories_memoryitem_changelist")).content.decode()
    assert "victim likes" in body and "home likes" in body


def test_api_key_workspace_cannot_change(world, admin_client):
    key = world.objects[("accounts", "apikey")]
    url = reverse("admin:accounts_apikey_change", args=[key.pk])
    response = admin_client.post(url, {"name": "renamed", "workspace": world.home.pk, "read_only": "on"})
    assert response.status_code == 302
    key.refresh_from_db()
    assert (key.name, key.workspace_id) == ("renamed", world.victim.pk)


def test_memberships_are_managed_in_the_admin(world, admin_client, django_user_model):
    staff = django_user_model.objects.create_user("new-operator", password="x", is_staff=True)
    response = admin_client.post(
        reverse("admin:accounts_workspacemembership_add"), {"user": staff.pk, "workspace": world.home.pk}
    )
    assert response.status_code == 302
    assert WorkspaceMembership.objects.filter(user=staff, workspace=world.home).exists()
    not_staff = django_user_model.objects.create_user("agent-owner", password="x")
    response = admin_client.post(
        reverse("admin:accounts_workspacemembership_add"), {"user": not_staff.pk, "workspace": world.home.pk}
    )
    assert response.status_code == 200 and not WorkspaceMembership.objects.filter(user=not_staff).exists()
