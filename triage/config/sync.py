"""`labels sync`: what the configuration's labels need on a repository, and doing it (create; update on request).

Pure planning (`plan_sync`) and a small executor (`apply_sync`) over a client with `list_repo_labels`,
`create_label` and `update_label`. It never deletes and never renames: a label the configuration does not name
is left alone, and one that exists under another capitalisation (GitHub matches label names without regard to
case) is reported, not changed.

May import: the standard library, `triage.config.labels`.
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.config.labels import LabelSet

CREATE, UPDATE, OK, DIFFERS = "create", "update", "ok", "differs"


@dataclass(frozen=True)
class Change:
    name: str
    action: str  # create | update | ok | differs (exists with another colour/description; --update to change)
    color: str
    description: str
    now_color: str = ""  # for update/differs: what the repository has now
    now_description: str = ""

    @property
    def differences(self) -> list[str]:
        """What differs, with the repository's value (and the configured colour; the configured description is
        the row's own): never "differs" over two equal colours. Empty for a label to create or one up to date."""
        if self.action not in (UPDATE, DIFFERS):
            return []
        out = []
        if self.now_color != self.color:
            out.append(f"colour #{self.now_color} here, #{self.color} configured")
        if self.now_description != self.description:  # the configured one is in the row's description column
            out.append(f"description here: {_shown(self.now_description)}")
        return out

    @property
    def what_differs(self) -> str:
        """"colour", "description" or "colour and description"."""
        return " and ".join(part.split(" ", 1)[0] for part in self.differences)


def _shown(text: str) -> str:
    return f"'{text}'" if text else "none"


def plan_sync(labels: LabelSet, existing: list[dict], *, update: bool = False) -> list[Change]:
    """One Change per label the configuration names, in its order."""
    have = {str(item.get("name", "")).lower(): item for item in existing}
    out = []
    for spec in labels.specs:
        color = spec.color.lower()
        found = have.get(spec.name.lower())
        if found is None:
            out.append(Change(spec.name, CREATE, color, spec.description))
            continue
        now_color = str(found.get("color") or "").lower()
        now_desc = found.get("description") or ""
        if now_color == color and now_desc == spec.description:
            out.append(Change(spec.name, OK, color, spec.description))
            continue
        # The repository's own capitalisation is kept: updating addresses the label by its existing name.
        out.append(Change(found.get("name", spec.name), UPDATE if update else DIFFERS, color, spec.description,
                          now_color, now_desc))
    return out


def queue_label_note(labels: LabelSet, existing: list[dict]) -> str | None:
    """One line when the queue label is not a label of the repository: people add it to put an issue in the queue,
    so sync does not create it (it has no colour or description in the configuration), but a fork that syncs its
    labels learns here, before any sweep, that its queue label names nothing (issue 40)."""
    names = {str(item.get("name", "")) for item in existing}
    if labels.queue_label in names:
        return None
    other = next((n for n in names if n.casefold() == labels.queue_label.casefold()), None)
    if other:
        return (f"the queue label '{labels.queue_label}' is '{other}' on the repository: write it so in the "
                "configuration's queue_label (an event names it as the repository has it)")
    return (f"the queue label '{labels.queue_label}' is not a label of the repository, so no issue can be in the "
            "queue: create it (people add it; sync does not), or set the configuration's queue_label to the label "
            "they use")


def counts(changes: list[Change]) -> dict[str, int]:
    return {k: sum(1 for c in changes if c.action == k) for k in (CREATE, UPDATE, OK, DIFFERS)}


def apply_sync(client, repo: str, changes: list[Change]) -> list[str]:
    """Carry out creates and updates; returns one line per write."""
    done = []
    for change in changes:
        if change.action == CREATE:
            client.create_label(repo, change.name, change.color, change.description)
            done.append(f"created {change.name}")
        elif change.action == UPDATE:
            client.update_label(repo, change.name, change.color, change.description)
            done.append(f"updated {change.name}")
    return done


def table(changes: list[Change], *, applied: bool, to_write: str = "--apply") -> str:
    """A plain-text table of what sync would do (or did); `to_write`: how the caller writes (the CLI's flag, the
    Action's input), said after a dry run."""
    verb = {CREATE: "created" if applied else "would create", UPDATE: "updated" if applied else "would update",
            OK: "up to date", DIFFERS: "differs"}
    rows = [(verb[c.action] + (f" ({c.what_differs})" if c.differences else ""), c.name, f"#{c.color}",
             c.description + (f"  [{'; '.join(c.differences)}]" if c.differences else "")) for c in changes]
    widths = [max(len(r[i]) for r in rows + [("action", "label", "colour", "")]) for i in range(3)]
    lines = [f"{'action':<{widths[0]}}  {'label':<{widths[1]}}  {'colour':<{widths[2]}}  description (configured)"]
    lines += [f"{a:<{widths[0]}}  {n:<{widths[1]}}  {c:<{widths[2]}}  {d}" for a, n, c, d in rows]
    n = counts(changes)
    lines.append(f"{n[CREATE]} to create, {n[UPDATE]} to update, {n[OK]} up to date, "
                 f"{n[DIFFERS]} differing" + (" (--update sets them as configured)" if n[DIFFERS] else "")
                 + "; nothing is ever deleted or renamed"
                 + ("" if applied else f" (dry run: {to_write} to write)"))
    return "\n".join(lines)
