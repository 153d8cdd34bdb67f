"""Non-zero exit codes for a failed run, whatever the configuration says.

Luigi exits 0 when a task failed unless its `[retcode]` section says otherwise. Importing this
module (`luigi --module pipelines` does) fills in that section's keys the user's configuration
leaves out, before Luigi reads them; a value the configuration gives is kept.
"""

from __future__ import annotations

import luigi.configuration

EXIT_CODES = {
    "already_running": 10,
    "missing_data": 20,
    "not_run": 25,
    "task_failed": 30,
    "scheduling_error": 35,
    "unhandled_exception": 40,
}


def set_default_exit_codes() -> None:
    """Give Luigi's `[retcode]` keys our non-zero codes where the configuration has none."""
    parser = luigi.configuration.get_config()
    if not parser.has_section("retcode"):
        parser.add_section("retcode")
    for key, code in EXIT_CODES.items():
        if not parser.has_option("retcode", key):
            parser.set("retcode", key, str(code))
