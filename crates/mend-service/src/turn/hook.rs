//! `mend turn hook AGENT`: a coding agent's hook, turned into a turn step.
//!
//! Each agent sends one JSON object when a prompt is submitted and when its
//! reply is finished (`docs/turn.md` has each one's configuration). The
//! project folder and the session come from that object; a prompt begins
//! a turn, a finished reply gets the turn's status as one line for the
//! person. The hook never blocks the agent: whatever happens, the reply is
//! what the agent's protocol takes as "go on", and the process exits 0;
//! when mend cannot act (bad JSON, no folder, not a git repository, the
//! lock held), the reply says why.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mend_checkpoint::turn::BeginOptions;
use serde_json::Value;

use super::{Action, Outcome, summary_line};

/// The agents whose hooks mend understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code: `UserPromptSubmit` and `Stop` command hooks.
    Claude,
    /// Gemini CLI: `BeforeAgent` and `AfterAgent` command hooks.
    Gemini,
    /// Codex: `UserPromptSubmit` and `Stop` hooks, or `notify`
    /// (`agent-turn-complete`, the JSON as the last argument).
    Codex,
    /// opencode: the plugin in `docs/turn.md` sends `chat.message` and
    /// `session.idle`.
    Opencode,
    /// Cline: `UserPromptSubmit` and `TaskComplete` hook scripts.
    Cline,
}

impl Agent {
    /// Every agent, by the name `mend turn hook` takes.
    pub const ALL: [(&'static str, Agent); 5] = [
        ("claude", Agent::Claude),
        ("gemini", Agent::Gemini),
        ("codex", Agent::Codex),
        ("opencode", Agent::Opencode),
        ("cline", Agent::Cline),
    ];

    /// The agent a name stands for.
    pub fn named(name: &str) -> Option<Agent> {
        Agent::ALL.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }

    /// The environment variable the agent documents as naming the
    /// project folder its hooks run for (the folder the session started
    /// in): Claude Code's `CLAUDE_PROJECT_DIR`, Gemini CLI's
    /// `GEMINI_PROJECT_DIR`. Codex, opencode and Cline document none; the
    /// folder in their JSON is the session's own.
    pub fn project_variable(self) -> Option<&'static str> {
        match self {
            Agent::Claude => Some("CLAUDE_PROJECT_DIR"),
            Agent::Gemini => Some("GEMINI_PROJECT_DIR"),
            Agent::Codex | Agent::Opencode | Agent::Cline => None,
        }
    }

    fn name(self) -> &'static str {
        Agent::ALL
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("agent", |(n, _)| n)
    }
}

/// The step an event asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A prompt was submitted: begin a turn.
    Begin,
    /// The reply is finished: summarise the turn.
    Status,
}

/// What an agent's JSON says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The event's name, as the agent spells it.
    pub name: String,
    /// The step, when mend acts on this event.
    pub step: Option<Step>,
    /// The project folder.
    pub dir: Option<PathBuf>,
    /// The agent's session.
    pub session: Option<String>,
}

/// What the hook prints: standard output in the agent's protocol, and a
/// line for its log on standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

fn field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Reads an agent's JSON; a UTF-8 byte order mark before it (which some
/// Windows tools write) is skipped.
pub fn parse(agent: Agent, input: &str) -> Result<Event, String> {
    let input = input.strip_prefix('\u{feff}').unwrap_or(input);
    let v: Value = serde_json::from_str(input.trim())
        .map_err(|e| format!("the hook's input is not JSON ({e})"))?;
    if !v.is_object() {
        return Err("the hook's input is not a JSON object".into());
    }
    let (name, begin, end) = match agent {
        Agent::Claude => (field(&v, "hook_event_name"), "UserPromptSubmit", "Stop"),
        Agent::Gemini => (field(&v, "hook_event_name"), "BeforeAgent", "AfterAgent"),
        Agent::Codex if v.get("type").is_some() => (field(&v, "type"), "", "agent-turn-complete"),
        Agent::Codex => (field(&v, "hook_event_name"), "UserPromptSubmit", "Stop"),
        Agent::Opencode => (field(&v, "event"), "chat.message", "session.idle"),
        Agent::Cline => (field(&v, "hookName"), "UserPromptSubmit", "TaskComplete"),
    };
    let name = name.ok_or("the hook's input names no event")?;
    let step = if name == begin {
        Some(Step::Begin)
    } else if name == end {
        Some(Step::Status)
    } else {
        None
    };
    let dir = match agent {
        Agent::Opencode => field(&v, "directory"),
        Agent::Cline => v
            .get("workspaceRoots")
            .and_then(|r| r.get(0))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => field(&v, "cwd"),
    };
    let session = match agent {
        Agent::Codex if v.get("type").is_some() => field(&v, "thread-id"),
        Agent::Opencode => field(&v, "sessionID"),
        Agent::Cline => field(&v, "taskId"),
        _ => field(&v, "session_id"),
    };
    Ok(Event {
        name,
        step,
        dir: dir.map(PathBuf::from),
        session,
    })
}

/// The git worktree `dir` is in.
fn root_of(dir: &Path) -> Result<PathBuf, String> {
    if !dir.is_absolute() {
        return Err(format!(
            "the folder {} is not an absolute path",
            dir.display()
        ));
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("{} is not a folder", dir.display())),
        Err(_) => return Err(format!("the folder {} does not exist", dir.display())),
    }
    let repo = git2::Repository::discover(dir)
        .map_err(|_| format!("{} is not in a git repository", dir.display()))?;
    repo.workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} is in a bare git repository", dir.display()))
}

/// The repository a session's turn is in, and a note when the event's
/// folder is in another one.
///
/// The agent's project variable (`env_dir`, when set and not empty) names
/// the folder the session started in; the JSON's folder is where the
/// agent is now, which for Claude Code follows every `cd` of its shell.
/// So the variable comes first, and an event's folder in another
/// repository is not followed: no turn is begun or summarised there, and
/// the note says so. Without the variable (Codex, opencode and Cline
/// document none; their JSON's folder is the session's own), the event's
/// folder is the project's.
pub fn project(
    event_dir: Option<&Path>,
    env_dir: Option<&Path>,
) -> Result<(PathBuf, Option<String>), String> {
    let Some(started) = env_dir.filter(|d| !d.as_os_str().is_empty()) else {
        let dir = event_dir.ok_or("the hook's input names no project folder")?;
        return Ok((root_of(dir)?, None));
    };
    let root = root_of(started)?;
    let note = event_dir
        .filter(|d| d.is_absolute())
        .and_then(|d| Some((d, root_of(d).ok()?)))
        .filter(|(_, other)| !same_folder(other, &root))
        .map(|(d, _)| {
            format!(
                "the agent's folder {} is in another repository than the session's project {}; mend leaves that repository alone, so its changes are in no turn",
                mend_core::text::escape_controls(&d.to_string_lossy()),
                mend_core::text::escape_controls(&root.to_string_lossy()),
            )
        });
    Ok((root, note))
}

/// Whether two paths name one folder (symbolic links and spellings aside).
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// What the hook does for `agent` given its input; `env_dir` is the
/// project folder the agent's environment names (`CLAUDE_PROJECT_DIR`,
/// `GEMINI_PROJECT_DIR`): the folder the session started in, which
/// comes before the JSON's (see [`project`]). Never fails: every failure
/// is a reply that lets the agent go on.
pub fn run(agent: Agent, input: &str, env_dir: Option<&Path>, lock_timeout: Duration) -> Reply {
    match step(agent, input, env_dir, lock_timeout) {
        Ok(Some(note)) => reply(agent, Some(&note), &note),
        Ok(None) => reply(agent, None, ""),
        Err(why) => {
            let note = format!("mend turn hook {}: nothing done: {why}", agent.name());
            reply(agent, Some(&note), &note)
        }
    }
}

/// The reply when mend cannot even read its own arguments (a missing or
/// unknown agent name, a bad option): `agent`, when the arguments name
/// one, gets its protocol's "go on" with `why`; an agent not named gets
/// nothing on standard output. Either way the caller exits 0.
pub fn refused(agent: Option<Agent>, why: &str) -> Reply {
    match agent {
        Some(a) => {
            let note = format!("mend turn hook {}: nothing done: {why}", a.name());
            reply(a, Some(&note), &note)
        }
        None => Reply {
            stdout: String::new(),
            stderr: format!("mend turn hook: nothing done: {why}\n"),
        },
    }
}

/// Does the event's step; `Ok(Some(line))` is a line to show the person.
fn step(
    agent: Agent,
    input: &str,
    env_dir: Option<&Path>,
    lock_timeout: Duration,
) -> Result<Option<String>, String> {
    let event = parse(agent, input)?;
    let Some(step) = event.step else {
        return Ok(None);
    };
    let (root, elsewhere) = project(event.dir.as_deref(), env_dir)?;
    let session = event.session.clone();
    let action = match step {
        Step::Begin => Action::Begin(BeginOptions {
            label: Some(format!("{} prompt", agent.name())),
            session: event.session,
            agent: Some(agent.name().to_owned()),
            force: false,
        }),
        // Counts only: a hunk count reads and diffs both sides of every
        // file, longer than an agent waits after a turn that rewrote
        // many large files.
        Step::Status => Action::Summary,
    };
    // Through the root's holder, as every front-end's turn: a daemon
    // serving the root takes the turn's start checkpoint with only the
    // paths its watcher saw change (its refusal came after it waited for
    // the lock: not waited again); without one, a full scan.
    let mut call = crate::Call::new(None, Some(lock_timeout));
    match crate::Watched::once(&root).turn(&mut call, &action).map(|(o, _)| o) {
        Ok(Outcome::Summary(s)) => {
            let line = whose(summary_line(&s), &s.turn, session.as_deref());
            Ok(Some(match elsewhere {
                Some(note) => format!("{line}; {note}"),
                None => line,
            }))
        }
        Ok(_) => Ok(elsewhere.map(|n| format!("mend: {n}"))),
        Err(crate::Error::Checkpoint(mend_checkpoint::Error::NoTurn)) => {
            Err("no turn is open (the hook that begins one on a prompt has not run, or `.mend` was deleted since; `mend checkpoint list` still lists earlier turns' starts)".into())
        }
        Err(e) => Err(crate::chain(&e)),
    }
}

/// `line`, saying so when the open turn was begun by another session of
/// an agent (two sessions in one worktree share its one turn).
fn whose(line: String, turn: &mend_checkpoint::turn::TurnInfo, session: Option<&str>) -> String {
    match (turn.session.as_deref(), session) {
        (Some(began), Some(this)) if began != this => format!(
            "{line} (the turn was begun by {} session {}, not this one: the worktree has one turn, and it shows every change)",
            mend_core::text::escape_controls(turn.agent.as_deref().unwrap_or("another")),
            mend_core::text::escape_controls(began)
        ),
        _ => line,
    }
}

/// The reply in the agent's protocol: `message` (when some) is shown to
/// the person where the protocol has a place for it; `log` goes to
/// standard error.
fn reply(agent: Agent, message: Option<&str>, log: &str) -> Reply {
    let json = |m: Option<&str>| match m {
        Some(m) => serde_json::json!({ "systemMessage": m }).to_string() + "\n",
        None => String::new(),
    };
    let stdout = match agent {
        // Plain text after a prompt would reach the model: JSON or nothing.
        Agent::Claude | Agent::Codex => json(message),
        // Only JSON, always.
        Agent::Gemini => match message {
            Some(_) => json(message),
            None => "{}\n".to_owned(),
        },
        Agent::Opencode => message.map_or(String::new(), |m| format!("{m}\n")),
        // Anything but this (a non-zero exit, other JSON) can block it.
        Agent::Cline => "{\"cancel\":false}\n".to_owned(),
    };
    Reply {
        stdout,
        stderr: if log.is_empty() {
            String::new()
        } else {
            format!("{log}\n")
        },
    }
}
