"""Applies model responses with aider's own edit-format code, for the
response replay benchmark (`response_replay`).

Reads a JSON list of jobs from the file named by the first argument, each
`{"id", "format", "response", "root", "files"}`: the response file, a root
holding a copy of the files before it, the files aider had in the chat
(relative to the root), and aider's edit format (`diff`, `diff-fenced`,
`whole`, `udiff`, `editor-diff`, ...). For each job it builds an aider
coder for that format over the root, without git, a model call or a
prompt, hands it the response as if the model had just sent it, and lets
aider parse and apply it as aider does after a model's reply. Three things
of the original session are restored that a case's files alone do not
carry: the fence (`session_fence`), backslash paths of Windows sessions
(`read_paths_as_windows`) and LF line endings in the response.
Writes one JSON object a line to the file named by the second argument:
`{"id", "status", "edited", "message"}`,
where `status` is `applied` (every edit placed), `refused` (aider reported
the response malformed or an edit unmatched; edits it did place before
that may still have been written, as aider writes them) or `error` (the
driver itself could not run the job).
"""

import contextlib
import io
import json
import os
import sys


def quiet_io():
    """An aider InputOutput that says yes, shows nothing and keeps no
    history files."""
    from aider.io import InputOutput

    return InputOutput(
        pretty=False,
        yes=True,
        fancy_input=False,
        input_history_file=None,
        chat_history_file=None,
    )


def session_fence(coder, response):
    """The fence the session used. aider picks it from every file in the
    chat (`<source>` when one of them holds triple backticks), and the
    replayed case holds only the files the response edits, so a tag fence
    the response itself opens a line with is taken as the session's."""
    from aider.coders.base_coder import all_fences

    lines = response.splitlines()
    for opening, closing in all_fences[2:]:
        if any(line.startswith(opening) for line in lines):
            return (opening, closing)
    return coder.fence


def read_paths_as_windows(coder):
    """Responses with `src\\app.py` come from sessions on Windows, where
    aider's paths take a backslash as a separator; the root path of a name
    is resolved the same way here."""
    resolve = coder.abs_root_path

    def abs_root_path(path):
        return resolve(path.replace("\\", "/"))

    coder.abs_root_path = abs_root_path


def apply_one(job, model):
    from aider.coders import Coder

    root = job["root"]
    fnames = [os.path.join(root, f) for f in job["files"] if os.path.exists(os.path.join(root, f))]
    # Read as aider reads text, line endings folded to `\n`: a transcript
    # written on Windows has CRLF where the model sent LF.
    with open(job["response"], encoding="utf-8") as f:
        response = f.read()
    errors = []
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        cwd = os.getcwd()
        os.chdir(root)
        try:
            coder = Coder.create(
                main_model=model,
                edit_format=job["format"],
                io=quiet_io(),
                fnames=fnames,
                use_git=False,
                auto_commits=False,
                dirty_commits=False,
                auto_lint=False,
                auto_test=False,
                suggest_shell_commands=False,
                detect_urls=False,
                map_tokens=0,
                stream=False,
            )
            # Without git, aider roots the session at the files' common
            # folder; the case's root is the project's.
            coder.root = root
            coder.abs_root_path_cache = {}
            coder.fence = session_fence(coder, response)
            read_paths_as_windows(coder)
            coder.partial_response_content = response
            coder.reflected_message = None
            edited = coder.apply_updates()
            if coder.reflected_message:
                errors.append(coder.reflected_message)
        finally:
            os.chdir(cwd)
    status = "refused" if errors else "applied"
    message = errors[0].strip().splitlines()[0] if errors else ""
    if not errors and not edited:
        status = "refused"
        message = "no edits found"
    return {
        "id": job["id"],
        "status": status,
        "edited": sorted(p.replace("\\", "/") for p in edited),
        "message": message,
    }


def offline_model():
    """A model object for the coder to hold. Applying edits never calls
    it; aider would fetch model prices from the network to build it, so
    that fetch is turned off (the metadata is not needed here)."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    from aider import models

    models.ModelInfoManager._update_cache = lambda self: None
    return models.Model("gpt-4o")


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        model = offline_model()
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for job in jobs:
            try:
                result = apply_one(job, model)
            except Exception as e:  # noqa: BLE001 - reported per job, the run goes on
                result = {"id": job["id"], "status": "error", "edited": [], "message": repr(e)}
            out.write(json.dumps(result) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
