//! `mend turn hook AGENT` through the real binary: each agent's documented
//! JSON (docs/turn.md) gives the right step and the reply its protocol
//! takes, and bad input never blocks the agent (exit 0, and why).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use mend_test_support::{mend_bin, put, repo, run_mend};

/// The agents' project variables, which the hook reads before the JSON:
/// unset for every run but the ones that set them, so a test run from
/// inside an agent's shell never acts on the project the agent is in.
const PROJECT_VARIABLES: [&str; 2] = ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"];

/// Runs the hook for `agent` with `json` on stdin (or, for Codex's
/// notify, as the last argument).
fn hook(root: &Path, agent: &str, json: &str, as_arg: bool) -> Output {
    let mut args = vec!["turn", "--lock-timeout", "1", "hook", agent];
    if as_arg {
        args.push(json);
        return hook_with(root, &args, &[], None);
    }
    hook_with(root, &args, &[], Some(json.as_bytes()))
}

/// Runs mend in `cwd` with `env` set (the project variables otherwise
/// unset) and `stdin` written, then closed.
fn hook_with(cwd: &Path, args: &[&str], env: &[(&str, &Path)], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(mend_bin());
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in PROJECT_VARIABLES {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn mend");
    {
        let mut sin = child.stdin.take().expect("stdin");
        if let Some(data) = stdin {
            let _ = sin.write_all(data);
        }
    }
    child.wait_with_output().expect("wait for mend")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The open turn's id and session, from `mend turn status --json`.
fn open_turn(root: &Path) -> (String, Option<String>) {
    let out = run_mend(root, &["turn", "status", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let turn = &v["turn"];
    (
        turn["id"].as_str().unwrap().to_owned(),
        turn["session"].as_str().map(str::to_owned),
    )
}

struct Agent {
    name: &'static str,
    /// The JSON of a prompt submitted, then of the reply done; `{cwd}` is
    /// the project folder.
    begin: &'static str,
    end: &'static str,
    /// Codex's notify passes the end as an argument.
    end_as_arg: bool,
    /// What the hook prints after the prompt, and after the reply
    /// (`{msg}` the summary line, as a JSON string where JSON is printed).
    begin_out: &'static str,
    end_out: &'static str,
    session: &'static str,
}

const AGENTS: &[Agent] = &[
    Agent {
        name: "claude",
        begin: r#"{"session_id":"c-1","transcript_path":"/tmp/t.jsonl","cwd":"{cwd}","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"Rename foo"}"#,
        end: r#"{"session_id":"c-1","transcript_path":"/tmp/t.jsonl","cwd":"{cwd}","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done."}"#,
        end_as_arg: false,
        begin_out: "",
        end_out: "{\"systemMessage\":{msg}}\n",
        session: "c-1",
    },
    Agent {
        name: "gemini",
        begin: r#"{"session_id":"g-1","transcript_path":"/tmp/t.json","cwd":"{cwd}","hook_event_name":"BeforeAgent","timestamp":"2025-12-01T10:30:00Z","prompt":"Fix"}"#,
        end: r#"{"session_id":"g-1","transcript_path":"/tmp/t.json","cwd":"{cwd}","hook_event_name":"AfterAgent","timestamp":"2025-12-01T10:31:00Z","prompt":"Fix","prompt_response":"Fixed","stop_hook_active":false}"#,
        end_as_arg: false,
        begin_out: "{}\n",
        end_out: "{\"systemMessage\":{msg}}\n",
        session: "g-1",
    },
    Agent {
        name: "codex",
        begin: r#"{"session_id":"x-1","turn_id":"t1","transcript_path":null,"cwd":"{cwd}","hook_event_name":"UserPromptSubmit","model":"m","permission_mode":"default","prompt":"Rename"}"#,
        end: r#"{"session_id":"x-1","turn_id":"t1","transcript_path":null,"cwd":"{cwd}","hook_event_name":"Stop","model":"m","permission_mode":"default","stop_hook_active":false,"last_assistant_message":null}"#,
        end_as_arg: false,
        begin_out: "",
        end_out: "{\"systemMessage\":{msg}}\n",
        session: "x-1",
    },
    Agent {
        name: "codex",
        begin: r#"{"session_id":"n-1","turn_id":"t1","transcript_path":null,"cwd":"{cwd}","hook_event_name":"UserPromptSubmit","model":"m","permission_mode":"default","prompt":"Rename"}"#,
        end: r#"{"type":"agent-turn-complete","thread-id":"n-1","turn-id":"t1","cwd":"{cwd}","input-messages":["Rename"],"last-assistant-message":"Done"}"#,
        end_as_arg: true,
        begin_out: "",
        end_out: "{\"systemMessage\":{msg}}\n",
        session: "n-1",
    },
    Agent {
        name: "opencode",
        begin: r#"{"event":"chat.message","sessionID":"o-1","directory":"{cwd}"}"#,
        end: r#"{"event":"session.idle","sessionID":"o-1","directory":"{cwd}"}"#,
        end_as_arg: false,
        begin_out: "",
        end_out: "{msg}\n",
        session: "o-1",
    },
    Agent {
        name: "cline",
        begin: r#"{"clineVersion":"3.36.0","hookName":"UserPromptSubmit","timestamp":"1737000000000","taskId":"k-1","workspaceRoots":["{cwd}"],"userId":"u","userPromptSubmit":{"prompt":"Add tests","attachments":[]}}"#,
        end: r#"{"clineVersion":"3.36.0","hookName":"TaskComplete","timestamp":"1737000000001","taskId":"k-1","workspaceRoots":["{cwd}"],"userId":"u","taskComplete":{"taskMetadata":{"taskId":"k-1","ulid":"01J"}}}"#,
        end_as_arg: false,
        begin_out: "{\"cancel\":false}\n",
        end_out: "{\"cancel\":false}\n",
        session: "k-1",
    },
];

/// A prompt begins a turn with the agent's session; the reply's end
/// prints the turn's summary in the agent's protocol.
#[test]
fn each_agents_documented_json_gives_the_right_step() {
    for a in AGENTS {
        let dir = repo(&[("a.txt", "one\n"), ("src/b.txt", "two\n")]);
        let root = dir.path();
        // The agent may run in a subfolder: the turn is the repository's.
        let cwd = root.join("src").to_string_lossy().into_owned();
        let out = hook(root, a.name, &a.begin.replace("{cwd}", &cwd), false);
        assert_eq!(out.status.code(), Some(0), "{}", a.name);
        assert_eq!(text(&out.stdout), a.begin_out, "{} begin", a.name);
        let (id, session) = open_turn(root);
        assert_eq!(session.as_deref(), Some(a.session), "{}", a.name);
        put(root, "a.txt", "ONE\n");
        put(root, "new.txt", "new\n");
        let out = hook(root, a.name, &a.end.replace("{cwd}", &cwd), a.end_as_arg);
        assert_eq!(out.status.code(), Some(0), "{}", a.name);
        let msg = format!(
            "mend: turn {id}: 2 files changed (1 M, 1 A); review with `mend turn diff`, undo with `mend turn reject`"
        );
        let shown = if a.end_out.contains("systemMessage") {
            serde_json::to_string(&msg).unwrap()
        } else {
            msg.clone()
        };
        assert_eq!(
            text(&out.stdout),
            a.end_out.replace("{msg}", &shown),
            "{} end",
            a.name
        );
        assert_eq!(text(&out.stderr), format!("{msg}\n"), "{} end", a.name);
        // The reply's end leaves the turn open for review.
        assert_eq!(open_turn(root).0, id);
    }
}

/// What the hook prints when it cannot act, for an agent that shows
/// JSON (Claude) and one that must never see anything else (Cline).
fn refused(root: &Path, agent: &str, input: &str) -> (String, String) {
    let out = hook(root, agent, input, false);
    assert_eq!(out.status.code(), Some(0), "{agent} {input}");
    (text(&out.stdout), text(&out.stderr))
}

/// Bad JSON, a folder that does not exist, a folder outside git, and the
/// lock held by another mend: exit 0, the agent's "go on", and why.
#[test]
fn bad_input_never_blocks_the_agent() {
    let dir = repo(&[("a.txt", "one\n")]);
    let root = dir.path();
    let plain = tempfile::tempdir().unwrap();
    let file = root.join("a.txt").to_string_lossy().into_owned();
    let event = |cwd: &str| {
        format!(r#"{{"session_id":"s","cwd":"{cwd}","hook_event_name":"UserPromptSubmit"}}"#)
    };
    let cline = |cwd: &str| {
        format!(r#"{{"hookName":"UserPromptSubmit","taskId":"k","workspaceRoots":["{cwd}"]}}"#)
    };
    let cases = [
        (
            "{ not json".to_owned(),
            cline("x").replace("}", ""),
            "is not JSON",
        ),
        (
            event("/no/such/folder"),
            cline("/no/such/folder"),
            "does not exist",
        ),
        (
            event(&plain.path().to_string_lossy()),
            cline(&plain.path().to_string_lossy()),
            "is not in a git repository",
        ),
        (event(&file), cline(&file), "a.txt is not a folder"),
        (
            format!("{}{}", event(&file), " ".repeat(16 << 20)),
            format!("{}{}", cline(&file), " ".repeat(16 << 20)),
            "its input is over 16 MiB",
        ),
        (
            event("relative/dir"),
            cline("relative/dir"),
            "not an absolute path",
        ),
        (
            r#"{"session_id":"s","hook_event_name":"UserPromptSubmit"}"#.to_owned(),
            r#"{"hookName":"UserPromptSubmit"}"#.to_owned(),
            "names no project folder",
        ),
    ];
    for (claude_in, cline_in, why) in &cases {
        let (stdout, stderr) = refused(root, "claude", claude_in);
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("Claude gets JSON");
        let shown = v["systemMessage"].as_str().unwrap();
        assert!(
            shown.starts_with("mend turn hook claude: nothing done: ") && shown.contains(why),
            "{shown}"
        );
        assert!(stderr.contains(why), "{stderr}");
        let (stdout, stderr) = refused(root, "cline", cline_in);
        assert_eq!(stdout, "{\"cancel\":false}\n");
        assert!(stderr.contains(why), "{why}: {stderr}");
        let (stdout, _) = refused(root, "gemini", claude_in);
        assert!(
            serde_json::from_str::<serde_json::Value>(&stdout).is_ok(),
            "{stdout}"
        );
    }
    assert!(!root.join(".mend/turn.json").exists(), "no turn was begun");
    // An event mend does not act on: nothing printed, nothing done.
    let other = r#"{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse"}"#;
    assert_eq!(
        refused(root, "claude", other),
        (String::new(), String::new())
    );
    // An agent mend does not know.
    let (stdout, stderr) = refused(root, "nosuch", "{}");
    assert_eq!(stdout, "");
    assert!(stderr.contains("no agent `nosuch`"), "{stderr}");
}

/// Two sessions of an agent in one worktree share its one turn: the
/// summary a session's Stop shows says when another session began it.
#[test]
fn a_summary_names_the_session_that_began_the_turn() {
    let dir = repo(&[("a.txt", "one\n")]);
    let root = dir.path();
    let cwd = root.to_string_lossy();
    let event = |session: &str, name: &str| {
        format!(r#"{{"session_id":"{session}","cwd":"{cwd}","hook_event_name":"{name}"}}"#)
    };
    let (stdout, _) = refused(root, "claude", &event("first", "UserPromptSubmit"));
    assert_eq!(stdout, "");
    put(root, "a.txt", "two\n");
    let (own, _) = refused(root, "claude", &event("first", "Stop"));
    assert!(
        own.contains("1 file changed") && !own.contains("session"),
        "{own}"
    );
    let (other, _) = refused(root, "claude", &event("second", "Stop"));
    assert!(
        other.contains("1 file changed")
            && other.contains("begun by claude session first, not this one"),
        "{other}"
    );
}

/// The lock held by another mend: the hook waits at most its timeout,
/// then says so and exits 0.
#[test]
fn a_held_lock_never_blocks_the_agent() {
    let dir = repo(&[("a.txt", "one\n")]);
    let root = dir.path();
    let ws = mend_workspace::Workspace::open(root, mend_workspace::Options::default()).unwrap();
    let lock = ws.lock().unwrap();
    let cwd = root.to_string_lossy();
    let input =
        format!(r#"{{"session_id":"s","cwd":"{cwd}","hook_event_name":"UserPromptSubmit"}}"#);
    let (stdout, stderr) = refused(root, "claude", &input);
    assert!(
        stdout.contains("nothing done") && stderr.contains("lock"),
        "{stdout}{stderr}"
    );
    drop(lock);
    let (stdout, _) = refused(root, "claude", &input);
    assert_eq!(stdout, "");
    assert!(root.join(".mend/turn.json").exists());
}

/// A hook whose own arguments are wrong (a missing or unknown agent, an
/// option mend does not have, a bad `--lock-timeout`) still exits 0: a
/// usage error's exit 2 stops Claude Code and Cline. An agent the
/// arguments name gets its protocol's "go on" with why; nothing is done.
#[test]
fn bad_arguments_never_block_the_agent() {
    let dir = repo(&[("a.txt", "one\n")]);
    let root = dir.path();
    let cases: &[(&[&str], &str, &str)] = &[
        (&["turn", "hook"], "", "no agent named; use claude, gemini"),
        (&["turn", "hook", "nosuch"], "", "no agent `nosuch`"),
        (&["turn", "hook", "--bogus"], "", "no agent named"),
        (
            &["turn", "hook", "cline", "--bogus"],
            "{\"cancel\":false}\n",
            "unexpected argument '--bogus'",
        ),
        (
            &["turn", "--lock-timeout", "soon", "hook", "gemini"],
            "{\"systemMessage\":",
            "invalid value 'soon' for '--lock-timeout",
        ),
        (
            &["turn", "hook", "claude", "one", "two"],
            "{\"systemMessage\":",
            "unexpected argument 'two'",
        ),
    ];
    for (args, stdout, why) in cases {
        let out = hook_with(root, args, &[], Some(b"{}"));
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            text(&out.stdout).starts_with(stdout),
            "{args:?}: {}",
            text(&out.stdout)
        );
        if stdout.contains("systemMessage") {
            assert!(text(&out.stdout).contains(why), "{args:?}");
        }
        let err = text(&out.stderr);
        assert!(
            err.starts_with("mend turn hook") && err.contains("nothing done: "),
            "{err}"
        );
        assert!(err.contains(why), "{args:?}: {err}");
    }
    assert!(!root.join(".mend/turn.json").exists(), "no turn was begun");
    // Elsewhere, a usage error stays one.
    let out = run_mend(root, &["turn", "status", "--bogus"], None);
    assert_eq!(out.status.code(), Some(2));
}

/// The session's project comes from the agent's project variable, before
/// the JSON's `cwd`: an agent that `cd`s into another repository makes
/// no turn there, and its reply's summary is still the project's.
#[test]
fn the_project_variable_comes_before_the_events_folder() {
    let project = repo(&[("a.txt", "one\n"), ("src/b.txt", "two\n")]);
    let other = repo(&[("c.txt", "three\n")]);
    let (root, away) = (project.path(), other.path());
    let event = |dir: &Path, name: &str| {
        format!(
            r#"{{"session_id":"s","cwd":"{}","hook_event_name":"{name}"}}"#,
            dir.display()
        )
    };
    for (agent, begin, end, var) in [
        ("claude", "UserPromptSubmit", "Stop", "CLAUDE_PROJECT_DIR"),
        ("gemini", "BeforeAgent", "AfterAgent", "GEMINI_PROJECT_DIR"),
    ] {
        let args = ["turn", "--lock-timeout", "1", "hook", agent];
        let env = [(var, root.join("src"))];
        let env: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
        // The agent has `cd`'d into the other repository before the prompt.
        let out = hook_with(away, &args, &env, Some(event(away, begin).as_bytes()));
        assert_eq!(out.status.code(), Some(0), "{agent}");
        assert!(
            text(&out.stderr).contains("in another repository than the session's project"),
            "{agent}: {}",
            text(&out.stderr)
        );
        assert!(
            !away.join(".mend").exists(),
            "{agent}: no turn in the other repository"
        );
        let (id, session) = open_turn(root);
        assert_eq!(session.as_deref(), Some("s"), "{agent}");
        put(root, "a.txt", format!("{agent}\n"));
        put(away, "c.txt", format!("{agent}\n"));
        let out = hook_with(away, &args, &env, Some(event(away, end).as_bytes()));
        assert_eq!(out.status.code(), Some(0), "{agent}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let shown = v["systemMessage"].as_str().unwrap();
        assert!(
            shown.starts_with(&format!("mend: turn {id}: 1 file changed (1 M)"))
                && shown.contains("its changes are in no turn"),
            "{agent}: {shown}"
        );
        assert!(!away.join(".mend").exists(), "{agent}");
    }
    // A variable set but empty is no project: the JSON's folder is.
    let args = ["turn", "--lock-timeout", "1", "hook", "claude"];
    let empty = [("CLAUDE_PROJECT_DIR", Path::new(""))];
    let out = hook_with(
        away,
        &args,
        &empty,
        Some(event(away, "UserPromptSubmit").as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(away.join(".mend/turn.json").exists());
}

/// What the hook makes of its standard input's bytes: a UTF-8 byte order
/// mark before the JSON is skipped; input over the limit, even cut inside
/// a character, and input that is not UTF-8 are refused with why.
#[test]
fn hook_input_takes_a_bom_and_says_why_it_refuses_the_rest() {
    let dir = repo(&[("a.txt", "one\n")]);
    let root = dir.path();
    let event = format!(
        r#"{{"session_id":"s","cwd":"{}","hook_event_name":"UserPromptSubmit","prompt":""#,
        root.display()
    );
    let args = ["turn", "--lock-timeout", "1", "hook", "claude"];
    let run = |input: &[u8]| {
        let out = hook_with(root, &args, &[], Some(input));
        assert_eq!(out.status.code(), Some(0));
        (text(&out.stdout), text(&out.stderr))
    };
    // Over 16 MiB of a two-byte letter, cut by the limit inside one.
    let mut large = event.clone().into_bytes();
    let pad = ((16 << 20) - large.len()) / 2 + 8;
    large.extend("é".repeat(pad).as_bytes());
    // The limit's byte read last (at 16 MiB) must start a letter.
    if (16 << 20) % 2 != event.len() % 2 {
        large.insert(event.len(), b'x');
    }
    assert!(std::str::from_utf8(&large[..=16 << 20]).is_err());
    large.extend(b"\"}");
    let (stdout, stderr) = run(&large);
    assert!(
        stdout.contains("its input is over 16 MiB") && stderr.contains("over 16 MiB"),
        "{stdout}{stderr}"
    );
    let (stdout, stderr) = run(&[event.as_bytes(), b"caf\xe9\"}"].concat());
    assert!(
        stdout.contains("is not UTF-8") && stderr.contains("is not UTF-8"),
        "{stdout}{stderr}"
    );
    assert!(!root.join(".mend/turn.json").exists(), "no turn was begun");
    let (stdout, stderr) = run(&["\u{feff}".as_bytes(), event.as_bytes(), b"\"}"].concat());
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", ""));
    assert!(root.join(".mend/turn.json").exists(), "the turn was begun");
}

/// An agent that writes its JSON and never closes standard input does not
/// hang the hook: it exits 0 within seconds and says why nothing was done.
#[test]
fn hook_input_that_never_ends_does_not_hang_the_hook() {
    let dir = repo(&[("a.txt", "one\n")]);
    let root = dir.path();
    let mut cmd = Command::new(mend_bin());
    cmd.args(["turn", "--lock-timeout", "1", "hook", "claude"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for v in PROJECT_VARIABLES {
        cmd.env_remove(v);
    }
    let mut child = cmd.spawn().expect("spawn mend");
    let mut stdin = child.stdin.take().expect("stdin");
    let event = format!(
        r#"{{"session_id":"s","cwd":"{}","hook_event_name":"UserPromptSubmit"}}"#,
        root.display()
    );
    stdin.write_all(event.as_bytes()).unwrap();
    let began = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the hook still waits for its input after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shown = v["systemMessage"].as_str().unwrap();
    assert!(
        shown.contains("its input did not end within 5 seconds"),
        "{shown}"
    );
    assert!(!root.join(".mend/turn.json").exists(), "no turn was begun");
}

/// The Stop hook counts files and letters without reading any file's
/// content (issue 40: it diffed every file for its hunk count, 29 s after
/// a turn that rewrote 40 files of 1 MB, against a 30 s hook timeout).
/// With the start's bytes of a changed file gone from the object store,
/// `status` cannot read them, and the hook still gives its summary.
#[test]
fn the_stop_hook_reads_no_file_content() {
    let start = "one\ntwo\n";
    let dir = repo(&[("f.txt", start), ("g.txt", "gone\n")]);
    let root = dir.path();
    let cwd = root.to_string_lossy();
    let claude = &AGENTS[0];
    let out = hook(root, "claude", &claude.begin.replace("{cwd}", &cwd), false);
    assert_eq!(text(&out.stdout), "", "{}", text(&out.stderr));
    put(root, "f.txt", "one\ntwo\nthree\n");
    std::fs::remove_file(root.join("g.txt")).unwrap();
    put(root, "h.txt", "new\n");
    let (id, _) = open_turn(root);
    let blob = git2::Oid::hash_object(git2::ObjectType::Blob, start.as_bytes())
        .unwrap()
        .to_string();
    let loose = root.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    std::fs::remove_file(&loose).unwrap();
    let status = run_mend(root, &["turn", "status"], None);
    assert_eq!(
        status.status.code(),
        Some(2),
        "status reads the start's bytes"
    );
    let out = hook(root, "claude", &claude.end.replace("{cwd}", &cwd), false);
    let msg = format!(
        "mend: turn {id}: 3 files changed (1 M, 1 A, 1 D); review with `mend turn diff`, undo with `mend turn reject`"
    );
    let want = serde_json::json!({ "systemMessage": msg }).to_string() + "\n";
    assert_eq!(text(&out.stdout), want, "{}", text(&out.stderr));
}
