/**
 * The policy `latch init` writes. Read-only tools pass; destructive shell commands and network
 * writes ask a phone; file edits go to the agent's own prompt; anything unknown asks a phone.
 * Written with String.raw, so that this text is the file byte for byte (no escaping twice).
 */
export const DEFAULT_POLICY = String.raw`# Latch policy. The first rule that matches a call decides; if none does, "default" does.
# Reference: docs/policy.md. A change that loosens this policy takes effect only once a phone
# approves it; a change that tightens it takes effect at once.

default = "ask"          # allow | deny | ask (a phone) | defer (the agent's own prompt)
default_risk = "medium"  # low | medium | high | critical

[[rule]]
name = "read-only tools"
tool = ["Read", "Glob", "Grep", "LS", "NotebookRead", "WebSearch", "WebFetch", "TodoWrite", "TodoRead", "BashOutput"]
action = "allow"
risk = "low"

# Searched anywhere in the command and in any case (DROP TABLE, and RM, which macOS runs as rm):
# after ; && | or a newline, inside $( ), backticks or quotes (bash -c '...'), behind sudo, env,
# xargs, nohup or timeout. (?<![\w.-]) starts a name: /bin/rm counts, docker run --rm does not.
# A spelling these miss (r''m, $IFS) is still asked, at the default risk: no rule allows it.
[[rule]]
name = "destructive shell commands"
tool = ["Bash", "exec"]
command_regex = [
  # rm with -r, -R, -f, -rf, -r -f, --recursive, --force (or --rec, --for), anywhere in its words
  '(?<![\w.-])rm\s([^;&|\n]*\s)?(-[a-z]*[rf]|--[rf])',
  # find -delete, find -exec rm
  '(?<![\w.-])find\s[^;&|\n]*\s-(delete|(exec|execdir|ok|okdir)\s+(\S*/)?(rm|shred|unlink)\s)',
  '(?<![\w.-])(shred|mkfs(\.\w+)?|dropdb)\s',
  '(?<![\w.-])dd\s[^;&|\n]*\bof=',
  '(?<![\w.-])(chmod|chown|chgrp)\s([^;&|\n]*\s)?(-[a-z]*r|--rec)',
  '(?<![\w.-])crontab\s([^;&|\n]*\s)?-[a-z]*r',
  # git push --force, --force-with-lease, -f, +branch, and deleting a remote branch (-d, :branch)
  '(?<![\w.-])git\s(.*\s)?push\s([^;&|\n]*\s)?(-[a-z]*[fd]|--for|--de|[+:]\S)',
  '(?<![\w.-])git\s(.*\s)?reset\s([^;&|\n]*\s)?--ha',
  '(?<![\w.-])git\s(.*\s)?clean\s([^;&|\n]*\s)?(-[a-z]*f|--f)',
  '(?<![\w.-])git\s(.*\s)?branch\s([^;&|\n]*\s)?(-[a-z]*d|--de)',
  '(?<![\w.-])git\s(.*\s)?stash\s+(drop|clear)\b',
  # git checkout -- . and git restore . throw away uncommitted work
  '(?<![\w.-])git\s(.*\s)?(checkout|restore)\s([^;&|\n]*\s)?\.(\s|$)',
  '(?<![\w.-])(kubectl\s(.*\s)?delete|terraform\s(.*\s)?(destroy|apply)|helm\s(.*\s)?(uninstall|delete))\b',
  # SQL, and the truncate command
  '(?<![\w.-])(drop\s+(table|database|schema)\b|delete\s+from\b|truncate\s)',
]
command_regex_flags = "i"
action = "ask"
risk = "high"

[[rule]]
name = "network writes and publishing"
tool = ["Bash", "exec"]
command_regex = [
  '(?<![\w.-])git\s(.*\s)?push(\s|$)',
  '(?<![\w.-])(npm|pnpm|yarn|cargo)\s(.*\s)?publish(\s|$)',
  '(?<![\w.-])curl\s.*(-X\s*|--request\s+)(POST|PUT|PATCH|DELETE)',
  '(?<![\w.-])curl\s(.*\s)?(-d|--data|--json|-F|--form|-T|--upload-file)',
  '(?<![\w.-])wget\s.*--(post|method)',
  '(?<![\w.-])scp\s',
  '(?<![\w.-])rsync\s.*:',
]
action = "ask"
risk = "medium"

# An allow rule matches only a command that is wholly one simple command: no ; && || | & or
# newline, no $( ), backticks, subshell, comment, or redirection other than 2>&1 and >/dev/null
# (docs/policy.md). So these patterns judge one program and its words, anchored ^...$.
[[rule]]
name = "read-only shell commands"
tool = ["Bash", "exec"]
command_regex = [
  '^ls( .*)?$',
  '^pwd( -[LP])?$',
  '^whoami$',
  # date -f FILE prints a file's lines in its errors, and -s sets the clock: only -u, -R, -I
  # and a +FORMAT, which cannot be taken for an option.
  '''^date( -u| --utc| -R| -I[a-z]*)*( \+[^\s'"\\$]*| '\+[^']*'| "\+[^"\\]*")?$''',
  # git reads files outside the work tree: git diff compares any two files when one path is
  # outside it (with or without --no-index), --output writes a file, -O reads one. So no word
  # may be an option spelling those (-…o, --ou…, --no-in…), start with / or ~, step up with ..,
  # or hold anything the shell would expand or unquote into one ($ * ? [ { quotes, backslash).
  '^git( --no-pager)? (status|diff|log|show)( (?!-[^-\s]*[oO]|--ou|--no-in|\.\.(\s|$))(?!\S*(\.\./|/\.\.(\s|$)|=[~/]))[\w@^.:-][\w@^~.:%,+=/-]*)*$',
  # git branch lists branches; with a name or -d -D -m -c -f it creates, deletes or moves one.
  '^git( --no-pager)? branch( -[arvl]+| --(all|remotes|verbose|list|show-current))*$',
]
action = "allow"
risk = "low"

# A repository's config and hooks run code: core.fsmonitor on git status, diff.external on git
# diff, its hooks on commit. Edited, they would turn the read-only git commands above into any code.
# So does any file that changes which config git reads: anything in .git (commondir, a worktree's
# or a submodule's gitdir), a .git file ("gitdir: …"), a HEAD that makes a folder a git folder of
# its own (core.worktree then gives it a work tree), and the user's own git config. Hooks kept in
# the project, which core.hooksPath or a hook manager runs on commit, are its hooks too.
[[rule]]
name = "repository config that runs code"
tool = ["Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch"]
path = [
  ".git", "*/.git", ".git/*", "*/.git/*", "HEAD", "*/HEAD", "*/.gitconfig", "*/.config/git/*",
  ".husky/*", "*/.husky/*", ".githooks/*", "*/.githooks/*", ".pre-commit-config.yaml",
  "*/.pre-commit-config.yaml", "lefthook.yml", "*/lefthook.yml", ".lefthook.yml", "*/.lefthook.yml",
]
action = "ask"
risk = "high"

[[rule]]
name = "file edits"
tool = ["Edit", "MultiEdit", "Write", "NotebookEdit"]
action = "defer"
risk = "low"
`;
