"""What a contract tester found, each as it is now: the HTTP API answers what its OpenAPI
description says (content types, errors, required bodies, Allow), refuses a body of the
wrong type as a websocket frame is refused, and knows no session it never opened."""

from __future__ import annotations

import httpx
import pytest

from conteur.server.testing import Device, Venue

ROUTES = [("GET", "events"), ("GET", "state"), ("GET", "state/done"), ("GET", "review"),
          ("GET", "review/first"), ("GET", "review/items"), ("GET", "review/challenges"),
          ("GET", "review/timeline"), ("GET", "review/fairness"), ("GET", "review/verify"),
          ("GET", "review/challenges/c1"), ("GET", "review/scenes/hall/steps"),
          ("GET", "review/scenes/hall/state?at=1"), ("GET", "export"), ("POST", "close"),
          ("POST", "commands"), ("POST", "tokens"), ("POST", "join-sheet")]
BODIES = {"commands": {"id": "c1", "command": {"type": "close_session"}},
          "tokens": {"role": "observer"}, "join-sheet": {}}


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    with Venue(tmp_path_factory.mktemp("contract") / "chronicle.db") as venue:
        http = httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {venue.token()}"})
        assert http.post("/sessions", json={"session": "night"}).json()["type"] == "ack"
        http.post("/sessions/night/roster", json={"characters": [
            {"id": "anna", "name": "Anna", "sheet": {"physical": 6}}]})
        yield venue, http
        http.close()


@pytest.fixture(scope="module")
def openapi(night):
    # made at its first request, several seconds on a busy machine: beyond httpx's 5 s
    return night[1].get("/schema/openapi.json", timeout=120).json()


def test_options_names_every_method_of_the_path(night):
    _, http = night
    reply = http.options("/sessions")
    assert reply.status_code == 204
    assert set(reply.headers["allow"].split(", ")) == {"GET", "POST", "OPTIONS"}


@pytest.mark.parametrize("method,path", ROUTES)
def test_an_unknown_session_is_404_on_every_route_and_nothing_is_written(night, openapi, method, path):
    venue, http = night
    head = venue.runtime.store.head()
    reply = http.request(method, f"/sessions/nosuch/{path}", json=BODIES.get(path) if method == "POST" else None)
    assert reply.status_code == 404, reply.text
    assert reply.json()["detail"] == "no session 'nosuch'"
    assert venue.runtime.store.head() == head and "nosuch" not in venue.runtime.store.sessions()
    template = "/sessions/{session}/" + path.split("?")[0].replace("/c1", "/{challenge}").replace("/hall/", "/{scene}/")
    assert "404" in openapi["paths"][template][method.lower()]["responses"], template


def test_a_roster_import_opens_the_session_it_names(night):
    venue, http = night
    reply = http.post("/sessions/fresh/roster", json={"name": "Fresh"})
    assert reply.status_code == 200 and "fresh" in venue.runtime.store.sessions()


@pytest.mark.parametrize("field,value,message", [
    ("expertise", 0, "Expected `bool | str | null`, got `int`"),  # Litestar alone took 0 for false
    ("bonus", "1", "Expected `int`, got `str`"),  # and "1" for 1
])
def test_a_command_field_of_the_wrong_type_is_400_naming_it_not_a_reject(night, field, value, message):
    _, http = night
    command = {"type": "roll_action", "character": "anna", "test": "Test (lockpicking, 1)", field: value}
    reply = http.post("/sessions/night/commands", json={"id": f"wrong-{field}", "command": command})
    assert reply.status_code == 400, reply.text
    # as Litestar words its own (the sheet editor shows them so)
    assert reply.json()["extra"] == [{"message": message, "key": f"command.{field}", "source": "body"}]


async def test_the_websocket_answers_the_same_frame_with_its_invalid_error_as_before(night):
    venue, _ = night
    async with Device(venue.ws_url, venue.token(), "night") as st:
        answer = await st.command({"type": "roll_action", "character": "anna", "expertise": 0})
        assert answer["type"] == "error" and answer["code"] == "invalid"
        assert "$.command.expertise" in answer["message"]


def test_an_integral_number_is_the_integer_it_is(night):
    _, http = night
    reply = http.post("/sessions", json={"session": "whole", "turn_seconds": 5.0, "accept_timeout": 60.0})
    assert reply.status_code == 200 and reply.json()["type"] == "ack", reply.text
    assert http.post("/sessions", json={"session": "half", "turn_seconds": 5.5}).status_code == 400


def test_the_join_sheet_wants_its_body_and_answers_errors_in_json(night, openapi):
    _, http = night
    missing = http.post("/sessions/night/join-sheet")
    assert missing.status_code == 400 and missing.headers["content-type"].startswith("application/json")
    assert "{} for every default" in missing.json()["detail"]
    broken = http.post("/sessions/night/join-sheet", content=b"\x00", headers={"content-type": "application/json"})
    assert broken.status_code == 400 and broken.headers["content-type"].startswith("application/json")
    page = http.post("/sessions/night/join-sheet", json={})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    operation = openapi["paths"]["/sessions/{session}/join-sheet"]["post"]
    assert operation["requestBody"]["required"] is True
    assert list(operation["responses"]["200"]["content"]) == ["text/html"]
    assert list(operation["responses"]["400"]["content"]) == ["application/json"]


@pytest.mark.parametrize("format,media_type", [("md", "text/markdown"), ("html", "text/html"),
                                                ("jsonl", "application/x-ndjson"), ("csv", "text/csv")])
def test_each_export_format_is_answered_in_a_documented_media_type(night, openapi, format, media_type):
    _, http = night
    reply = http.get(f"/sessions/night/export?format={format}")
    assert reply.status_code == 200 and reply.headers["content-type"].split(";")[0] == media_type
    assert media_type in openapi["paths"]["/sessions/{session}/export"]["get"]["responses"]["200"]["content"]
    bad = http.get("/sessions/night/export?lang=xx")
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("application/json")


def test_a_roster_key_the_file_does_not_have_is_refused_and_the_schema_says_so(night, openapi):
    _, http = night
    reply = http.post("/sessions/night/roster", json={"charcters": []})
    assert reply.status_code == 400 and "charcters" in reply.json()["detail"]
    body = openapi["paths"]["/sessions/{session}/roster"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["additionalProperties"] is False
    assert {"name", "ruleset", "options", "scenes", "characters"} <= set(body["schema"]["properties"])
    assert "session" not in body["schema"]["properties"]  # the URL names it


@pytest.mark.parametrize("characters", [True, 3, "anna", {"id": "anna"}])
def test_a_roster_whose_characters_are_no_list_is_400_never_500(night, characters):
    _, http = night
    reply = http.post("/sessions/night/roster", json={"characters": characters})
    assert reply.status_code == 400 and "$.characters" in reply.json()["detail"], reply.text


def test_an_address_over_its_bad_tokens_is_told_429_on_the_channel_as_documented(tmp_path):
    """POST /channel answers 429 with its Retry-After once an address sent too many unknown
    tokens, as every route does; its description documents the 429 (a contract tester saw
    it undocumented)."""
    with Venue(tmp_path / "chronicle.db") as venue:
        with httpx.Client(base_url=venue.url) as http:
            opened = {"id": "0" * 12, "nonce": "UWeHGyOVhWhfPMJYN2aG-7SmPCUBsmSrMWfyVrNAoLg"}
            assert http.post("/channel", json=opened).status_code == 200
            for _ in range(venue.runtime.limits.bad):
                assert http.get("/me", headers={"Authorization": "Bearer no-such-token"}).status_code == 401
            reply = http.post("/channel", json=opened)
            assert reply.status_code == 429, reply.text
            assert int(reply.headers["retry-after"]) >= 1
            schema = http.get("/schema/openapi.json", timeout=120).json()
    assert "429" in schema["paths"]["/channel"]["post"]["responses"]
