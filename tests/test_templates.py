"""Comment templates: sandboxed Jinja, the hidden marker, and only a validated login from the issue."""

from __future__ import annotations

import shutil

import pytest

from engine_helpers import ROOT
from triage.config.templates import TemplatesError, build_templates, comment_marker, has_marker, safe_login

TEMPLATES = ROOT / "queues" / "distributed" / "templates"
SUFFIX = ".md.j2"


def load_templates(directory, required=("not_distributed", "needs_distributed_reproduction")):
    """A templates directory as the bundle reads one: every NAME.md.j2, `required` present (the distributed
    queue's steps post these two)."""
    sources = {p.name[: -len(SUFFIX)]: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*" + SUFFIX))}
    return build_templates(str(directory), sources, required)


@pytest.fixture
def template_dir(tmp_path):
    target = tmp_path / "templates"
    shutil.copytree(TEMPLATES, target)
    return target


def test_marker_helpers():
    assert comment_marker("not_distributed") == "<!-- ptd-triage:not_distributed -->"
    assert has_marker("text\n<!-- ptd-triage:not_distributed -->", "not_distributed")
    assert not has_marker("text <!-- ptd-triage:needs_distributed_reproduction -->", "not_distributed")
    assert not has_marker(None, "not_distributed") and not has_marker("", "not_distributed")


@pytest.mark.parametrize("name", ["not_distributed", "needs_distributed_reproduction"])
def test_bundled_templates_render_with_the_marker_appended(name):
    templates = load_templates(TEMPLATES)
    body = templates.render(name, author="octo-cat")
    assert body.endswith("\n\n" + comment_marker(name) + "\n")
    assert body.count("<!-- ptd-triage:") == 1
    assert "@octo-cat" in body


def test_marker_is_appended_even_if_the_template_forgets_it(template_dir):
    (template_dir / "not_distributed.md.j2").write_text("Plain text, no marker.")
    body = load_templates(template_dir).render("not_distributed")
    assert body == "Plain text, no marker.\n\n<!-- ptd-triage:not_distributed -->\n"


@pytest.mark.parametrize(
    "login",
    ["evil<script>", "@everyone", "-leading", "trailing-", "double--hyphen", "x" * 40, "has space", "ünicode", "a]b(c)", ""],
)
def test_hostile_or_invalid_logins_are_dropped(login):
    assert safe_login(login) is None
    body = load_templates(TEMPLATES).render("needs_distributed_reproduction", author=login)
    assert body.startswith("Hi, ")  # no mention at all
    if login:
        assert login not in body


@pytest.mark.parametrize("login", ["a", "octocat", "octo-cat", "A1-b2-C3", "x" * 39])
def test_valid_logins_pass(login):
    assert safe_login(login) == login


@pytest.mark.parametrize(
    "source",
    [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ author.__class__.__init__.__globals__ }}",
        "{{ cycler.__init__.__globals__.os }}",
        "{% set x = [].append(1) %}{{ x }}",  # the immutable sandbox refuses mutation
    ],
)
def test_unsafe_templates_fail_at_load(template_dir, source):
    (template_dir / "not_distributed.md.j2").write_text(source)
    with pytest.raises(TemplatesError) as info:
        load_templates(template_dir)
    assert "not_distributed.md.j2" in str(info.value) and "\n" not in str(info.value)


def test_undefined_variable_fails_at_load(template_dir):
    (template_dir / "needs_distributed_reproduction.md.j2").write_text("Hello {{ issue_title }}")
    with pytest.raises(TemplatesError):
        load_templates(template_dir)


def test_autoescape_applies_to_values(template_dir):
    # even a value that passed the login check is escaped: the template cannot emit raw HTML from it
    (template_dir / "not_distributed.md.j2").write_text("{{ '<b>' }} {{ author }}")
    body = load_templates(template_dir).render("not_distributed", author="bob")
    assert "&lt;b&gt;" in body and "<b>" not in body


def test_missing_template_is_an_error(template_dir):
    templates = load_templates(template_dir)
    with pytest.raises(TemplatesError) as info:
        templates.render("close_as_duplicate")
    assert "close_as_duplicate" in str(info.value)
    (template_dir / "needs_distributed_reproduction.md.j2").unlink()
    with pytest.raises(TemplatesError) as info:
        load_templates(template_dir)
    assert "needs_distributed_reproduction.md.j2" in str(info.value)


def test_extra_templates_are_loaded_and_checked(template_dir):
    (template_dir / "thanks.md.j2").write_text("Thanks{% if author %} @{{ author }}{% endif %}!")
    templates = load_templates(template_dir)
    assert "thanks" in templates.names
    assert templates.render("thanks", author="amy").startswith("Thanks @amy!")


# ---- bounded and checked (issue 12) --------------------------------------------------------------------------------

from triage.config.templates import HOSTILE_AUTHORS, MAX_COMMENT  # noqa: E402


@pytest.mark.parametrize(
    "source",
    [
        "{{ 'x' * 10**8 }}",  # once: a 100-million-character comment POSTed
        "{{ 'x' * 10**11 }}",  # would be a 100 GB string before any size check
        "{% for i in range(100000) %}{{ 'y' * 60000 }}{% endfor %}",
        "{{ 'z' * 65500 }}",  # under the limit alone, over it with the marker
    ],
)
def test_a_template_that_renders_too_long_is_refused_at_load(template_dir, source):
    (template_dir / "not_distributed.md.j2").write_text(source)
    with pytest.raises(TemplatesError) as info:
        load_templates(template_dir)
    message = str(info.value)
    assert "not_distributed.md.j2" in message and "\n" not in message
    assert "65,536" in message or "65536" in message


def test_the_longest_comment_that_fits_is_accepted(template_dir):
    marker = comment_marker("not_distributed")
    room = MAX_COMMENT - len(marker) - 3
    (template_dir / "not_distributed.md.j2").write_text("{{ 'z' * %d }}" % room)
    body = load_templates(template_dir).render("not_distributed")
    assert len(body) == MAX_COMMENT


@pytest.mark.parametrize(
    "source",
    [
        "{{ author.upper() }}",  # fails only when there is no valid login
        "Hi @{{ author ~ '' if author|length < 39 else author.nope() }}",  # fails only for the longest login
    ],
)
def test_a_template_that_fails_for_some_author_is_refused_at_load(template_dir, source):
    (template_dir / "needs_distributed_reproduction.md.j2").write_text(source)
    with pytest.raises(TemplatesError) as info:
        load_templates(template_dir)
    assert "needs_distributed_reproduction.md.j2" in str(info.value) and "\n" not in str(info.value)


def test_a_failure_at_triage_is_a_templates_error_naming_the_template(template_dir):
    templates = load_templates(template_dir)
    # a template object that fails in a way no load-time author showed (e.g. a bug in a filter)
    templates.compiled["not_distributed"] = templates.compiled["not_distributed"].environment.from_string("{{ 1 // 0 }}")
    with pytest.raises(TemplatesError) as info:
        templates.render("not_distributed", author="octocat")
    assert "not_distributed.md.j2" in str(info.value) and "division" in str(info.value)


@pytest.mark.parametrize("author", HOSTILE_AUTHORS)
def test_bundled_templates_render_for_every_hostile_author(author):
    body = load_templates(TEMPLATES).render("needs_distributed_reproduction", author=author)
    assert len(body) <= MAX_COMMENT
    body.encode("utf-8")  # a surrogate in a login never reaches the text
    if author and safe_login(author) is None:
        assert author not in body


@pytest.mark.parametrize("login", ["octocat\n", "a" * 39 + "\n", "\ud800", None, 42])
def test_logins_with_a_trailing_newline_or_not_a_string_are_dropped(login):
    assert safe_login(login) is None
