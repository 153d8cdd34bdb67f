"""Push every annotator's tasks to Label Studio, and pull the completed annotations back.

**One project per annotator.** The open-source Label Studio has no task assignment (assigning
tasks to people is an Enterprise and Starter Cloud feature), and everyone in a project sees all
of its tasks, so each annotator gets a project of their own, titled `<prefix> <annotator>`
(prefix `tipqa <run>/<pool>` unless `[labelstudio] project_prefix` is set; Label Studio allows
50 characters) and described as made by tipqa. The organiser sends each person the link to
their project (`label-studio/projects.json`).

**Push.** For each annotator: find the project by its title (or create it with
`[labelstudio] label_config`, no skip button, one annotation per task), list its tasks by our
item id (`data.item_id`), and import only the annotator's tasks it lacks, then check that the
project holds each of them exactly once. So a rerun (or a run after a crash midway) never
duplicates projects or tasks. A project that holds tasks that are not the annotator's (the
sample was exported again, or tasks were added by hand), a task without an item id, an item
twice, or a project of that title that tipqa did not make, is an error naming the project.

**Pull.** For each annotator: export their project as JSON (every task), save it atomically as
`label-studio/pulled/<annotator>.json` (the raw export, kept even when incomplete), check it
(extra tasks or annotations of unknown or foreign items, tasks missing from the project, tasks
not annotated yet, then every check of `importing.read_label_studio`), and only then replace
`<completed>/<annotator>.json` atomically, when its content changed: `AnnotationAgreement`
knows the completed files by size and modification time, so it runs again exactly when some
annotation changed. An annotator whose project has no annotation at all while a completed
sheet (.csv / .xlsx) of theirs is present is skipped and counted (they worked in the
spreadsheet). Problems of some annotators do not stop the others: their files are
written, then one `PullIncomplete` lists every annotator that is not done and why; the stats
file, which marks the pull finished, is written only when all are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tqdm import tqdm

from tipqa.annotation.importing import assignment_of, completed_file, read_label_studio
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.labelstudio_server import LabelStudioError, LabelStudioServer, shown_url
from tipqa.annotation.layout import AnnotationLayout
from tipqa.core.errors import ConfigError, InputError, TipqaError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import atomic_open, read_json, read_records, write_json
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step

TITLE_LIMITS = (3, 50)
MARKER = "tipqa annotation project"
SHOWN = 5


class PullIncomplete(TipqaError):
    """Some annotators' projects are not complete; the complete ones were written."""


def default_prefix(layout: AnnotationLayout) -> str:
    """`tipqa <run>/<pool>`: the run's name and the pool, from the annotation tree's path."""
    return f"tipqa {layout.root.parent.parent.name}/{layout.root.name}"


def project_title(prefix: str, annotator: str) -> str:
    """The project title of one annotator: the stable key the push and the pull look up."""
    title = f"{prefix.strip()} {annotator}".strip()
    low, high = TITLE_LIMITS
    if not low <= len(title) <= high:
        raise ConfigError(
            f"Label Studio project title {title!r} has {len(title)} characters (Label Studio "
            f"allows {low} to {high}): set a shorter [labelstudio] project_prefix"
        )
    return title


def _shown(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN]) + (" ..." if len(ids) > SHOWN else "")


def assignment(layout: AnnotationLayout) -> dict[str, list[str]]:
    """Annotator -> their item ids, in the export's order (from the manifest)."""
    manifest = read_json(layout.manifest)
    annotators = manifest.get("annotators") if isinstance(manifest, dict) else None
    if not isinstance(annotators, dict) or not annotators:
        raise InputError("no 'annotators' in the manifest", path=str(layout.manifest))
    return {str(name): [str(i) for i in ids] for name, ids in annotators.items()}


def _exported_tasks(layout: AnnotationLayout, annotator: str, ids: list[str]) -> list[dict]:
    """The annotator's exported Label Studio tasks, checked against the manifest."""
    path = layout.label_studio(annotator)
    tasks = read_json(path)
    found = (
        [(t.get("data") or {}).get("item_id") if isinstance(t, dict) else None for t in tasks]
        if isinstance(tasks, list)
        else None
    )
    if found != ids:
        raise InputError(
            f"the tasks of {annotator} differ from the manifest's items (export again)",
            path=str(path),
        )
    return tasks  # type: ignore[return-value]


def find_project(server: LabelStudioServer, title: str) -> int | None:
    """The id of the one project titled `title` that tipqa made, None when there is none."""
    found = server.projects_titled(title)
    if len(found) > 1:
        ids = ", ".join(str(p.id) for p in found)
        raise LabelStudioError(
            f"{len(found)} projects titled {title!r} at {shown_url(server.url)} (ids {ids}): "
            "delete the extra ones in Label Studio"
        )
    if not found:
        return None
    if not found[0].description.startswith(MARKER):
        raise LabelStudioError(
            f"project {found[0].id} titled {title!r} at {shown_url(server.url)} was not made by "
            "tipqa: rename it, or set another [labelstudio] project_prefix"
        )
    return found[0].id


def project_items(server: LabelStudioServer, project: int, title: str) -> dict[str, int]:
    """Item id -> task id of a project; a task without an item id, or an item twice, is an error."""
    items: dict[str, int] = {}
    for task, item in server.task_items(project):
        if not item:
            raise LabelStudioError(
                f"project {title!r} (id {project}) has task {task} without data.item_id: it was "
                "not imported by tipqa; delete it in Label Studio"
            )
        if item in items:
            raise LabelStudioError(
                f"project {title!r} (id {project}) holds item {item} twice (tasks {items[item]} "
                f"and {task}): delete one in Label Studio"
            )
        items[item] = task
    return items


def _push_one(
    server: LabelStudioServer,
    title: str,
    annotator: str,
    tasks: list[dict],
    label_config: str,
    stats: StepStats,
) -> int:
    """Make sure the annotator's project exists with our config and holds exactly their tasks."""
    project = find_project(server, title)
    if project is None:
        description = f"{MARKER}: the items of {annotator} ({len(tasks)}); see the guidelines."
        project = server.create_project(title, description, label_config)
        stats.add("projects_created")
    elif server.label_config(project).strip() != label_config.strip():
        server.set_label_config(project, label_config)
        stats.add("label_configs_updated")
    ids = [t["data"]["item_id"] for t in tasks]
    present = project_items(server, project, title)
    extra = sorted(set(present) - set(ids))
    if extra:
        raise LabelStudioError(
            f"project {title!r} (id {project}) holds {len(extra)} task(s) that are not "
            f"{annotator}'s items in this export, e.g. {_shown(extra)}: was the sample exported "
            "again? Delete the project in Label Studio, or set another [labelstudio] "
            "project_prefix"
        )
    missing = [t for t in tasks if t["data"]["item_id"] not in present]
    batch = max(1, server.settings.import_batch)
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        created = server.import_tasks(project, chunk)
        if created != len(chunk):
            raise LabelStudioError(
                f"project {title!r} (id {project}): imported {len(chunk)} task(s), the server "
                f"created {created}"
            )
    stats.add("tasks_imported", len(missing))
    stats.add("tasks_already_present", len(tasks) - len(missing))
    if missing:
        now = project_items(server, project, title)
        if sorted(now) != sorted(ids):
            raise LabelStudioError(
                f"project {title!r} (id {project}) does not hold exactly {annotator}'s "
                f"{len(ids)} items after the import ({len(now)} tasks)"
            )
    return project


def _stats(step: str, server: LabelStudioServer, record: StepRecord | None) -> StepStats:
    """A push's or a pull's stats: the server (no credentials) and the token's user."""
    provenance = record.provenance() if record is not None else None
    stats = StepStats(step, info={"url": shown_url(server.url)}, provenance=provenance)
    stats.info["user"] = server.check()
    return stats


def pushed_to(layout: AnnotationLayout) -> str | None:
    """The server the last finished push went to (None before any): a push elsewhere reruns."""
    if not layout.push_stats.exists():
        return None
    stats = read_json(layout.push_stats)
    info = stats.get("info") if isinstance(stats, dict) else None
    url = info.get("url") if isinstance(info, dict) else None
    return url if isinstance(url, str) else None


def push_annotation(
    server: LabelStudioServer,
    layout: AnnotationLayout,
    prefix: str,
    label_config: str,
    record: StepRecord | None = None,
) -> StepStats:
    """Create (or find) every annotator's project and import their missing tasks; stats last."""
    stats = _stats(Step.ANNOTATION_PUSH, server, record)
    projects: dict[str, dict[str, Any]] = {}
    for annotator, ids in tqdm(assignment(layout).items(), desc="push to Label Studio"):
        tasks = _exported_tasks(layout, annotator, ids)
        title = project_title(prefix, annotator)
        project = _push_one(server, title, annotator, tasks, label_config, stats)
        projects[annotator] = {
            "project": project,
            "title": title,
            "url": server.project_url(project),
            "tasks": len(ids),
        }
        stats.add("projects")
    write_json(layout.label_studio_projects, projects)
    stats.write(layout.push_stats)
    return stats


def _annotated(task: dict) -> bool:
    annotations = task.get("annotations") or []
    return any(isinstance(a, dict) and not a.get("was_cancelled") for a in annotations)


def _check_export(
    tasks: list[Any], title: str, annotator: str, ids: list[str], assigned: dict[str, list[str]]
) -> list[str]:
    """Extra or missing tasks are errors; the item ids of the tasks not yet annotated."""
    items = [str((t.get("data") or {}).get("item_id", "")) for t in tasks if isinstance(t, dict)]
    extra = sorted({i for i in items if annotator not in assigned.get(i, [])})
    if extra:
        unknown = [i for i in extra if i not in assigned]
        kind = "unknown items (not in the key)" if unknown else "items of other annotators"
        raise InputError(
            f"project {title!r} holds {len(extra)} task(s) of {kind} that are not "
            f"{annotator}'s: {_shown(extra)}; delete them in Label Studio"
        )
    missing = sorted(set(ids) - set(items))
    if missing:
        raise InputError(
            f"project {title!r} lacks {len(missing)} of {annotator}'s {len(ids)} tasks: "
            f"{_shown(missing)}; run PushAnnotation to import them"
        )
    return [str(t["data"]["item_id"]) for t in tasks if isinstance(t, dict) and not _annotated(t)]


def _pull_one(
    server: LabelStudioServer,
    layout: AnnotationLayout,
    completed: Path,
    title: str,
    annotator: str,
    ids: list[str],
    assigned: dict[str, list[str]],
    stats: StepStats,
) -> None:
    """Export one annotator's project; write their completed file if it is complete and valid."""
    project = find_project(server, title)
    if project is None:
        raise InputError(
            f"no project titled {title!r} at {shown_url(server.url)}: run PushAnnotation (to "
            f"push again after deleting projects, delete {layout.push_stats} first)"
        )
    tasks = server.export_json(project)
    raw = layout.pulled(annotator)
    write_json(raw, tasks)
    open_items = _check_export(tasks, title, annotator, ids, assigned)
    sheet = completed_file(completed, annotator)
    if sheet is not None and sheet.suffix.lower() != ".json":
        if len(open_items) == len(ids):
            stats.add("annotators_on_sheets")
            return
        raise InputError(
            f"{annotator} has both {sheet.name} and annotations in project {title!r}; keep one "
            "(move the sheet away to use the project)"
        )
    if open_items:
        raise InputError(
            f"{len(open_items)} of {annotator}'s {len(ids)} tasks are not annotated yet in "
            f"project {title!r} ({server.project_url(project)}): {_shown(open_items)}"
        )
    annotations = read_label_studio(raw, annotator, assigned)
    target, content = Path(completed) / f"{annotator}.json", raw.read_bytes()
    if target.exists() and target.read_bytes() == content:
        stats.add("annotators_unchanged")
    else:
        with atomic_open(target) as handle:
            handle.write(content)
        stats.add("annotators_updated")
    stats.add("annotators_pulled")
    stats.add("annotations_pulled", len(annotations))
    stats.add("problematic_flags", sum(a.problematic for a in annotations))


def pull_annotation(
    server: LabelStudioServer,
    layout: AnnotationLayout,
    prefix: str,
    completed: Path,
    record: StepRecord | None = None,
) -> StepStats:
    """Export every annotator's project into `completed/<annotator>.json`; stats when all are."""
    stats = _stats(Step.ANNOTATION_PULL, server, record)
    assigned = assignment_of(read_records(layout.key, AnnotationItem))
    problems: dict[str, str] = {}
    for annotator, ids in tqdm(assignment(layout).items(), desc="pull from Label Studio"):
        title = project_title(prefix, annotator)
        try:
            _pull_one(server, layout, Path(completed), title, annotator, ids, assigned, stats)
        except InputError as exc:
            problems[annotator] = str(exc)
            stats.error("annotator_not_complete")
    if problems:
        total = len(assignment(layout))
        lines = "\n".join(f"- {name}: {problem}" for name, problem in problems.items())
        raise PullIncomplete(
            f"{len(problems)} of {total} annotators are not complete; the other annotators' "
            f"files are in {completed}:\n{lines}"
        )
    stats.write(layout.pull_stats)
    return stats
