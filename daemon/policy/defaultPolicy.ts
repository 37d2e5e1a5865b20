/**
 * The policy `latch init` writes. Read-only tools pass; destructive shell commands and network
 * writes ask a phone; file edits go to the agent's own prompt; anything unknown asks a phone.
 */
export const DEFAULT_POLICY = `# Latch policy. The first rule that matches a call decides; if none does, "default" does.
# Reference: docs/policy.md. A change that loosens this policy takes effect only once a phone
# approves it; a change that tightens it takes effect at once.

default = "ask"          # allow | deny | ask (a phone) | defer (the agent's own prompt)
default_risk = "medium"  # low | medium | high | critical

[[rule]]
name = "read-only tools"
tool = ["Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch", "WebFetch", "TodoWrite", "TodoRead", "BashOutput"]
action = "allow"
risk = "low"

[[rule]]
name = "destructive shell commands"
tool = ["Bash", "exec"]
command_regex = "(^|[;&|]\\\\s*)(sudo\\\\s+)?(rm\\\\s+-[a-zA-Z]*[rf]|dd\\\\s|mkfs|shred\\\\s|git\\\\s+push\\\\s+.*(--force|-f\\\\b)|git\\\\s+reset\\\\s+--hard|git\\\\s+clean\\\\s+-[a-zA-Z]*f|kubectl\\\\s+delete|terraform\\\\s+(destroy|apply)|drop\\\\s+(table|database))"
action = "ask"
risk = "high"

[[rule]]
name = "network writes and publishing"
tool = ["Bash", "exec"]
command_regex = "(git\\\\s+push|npm\\\\s+publish|curl\\\\s.*-X\\\\s*(POST|PUT|PATCH|DELETE)|curl\\\\s.*(-d|--data)|wget\\\\s.*--post|scp\\\\s|rsync\\\\s.*:)"
action = "ask"
risk = "medium"

[[rule]]
name = "read-only shell commands"
tool = ["Bash", "exec"]
command_regex = "^(ls|pwd|whoami|date|git (status|diff|log|show|branch))( [^;&|<>\`$()]*)?$"
action = "allow"
risk = "low"

[[rule]]
name = "file edits"
tool = ["Edit", "MultiEdit", "Write", "NotebookEdit"]
action = "defer"
risk = "low"
`;
