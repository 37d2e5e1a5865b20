/**
 * A shell-style glob as a regular expression over the whole string: `*` is any run of
 * characters (slashes and spaces included), `?` one character, `[abc]` a class. Commands and
 * paths are matched whole, so `rm -rf *` matches `rm -rf build` and not `echo rm -rf x`.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const character = glob[i]!;
    if (character === '*') {
      while (glob[i + 1] === '*') i++;
      source += '.*';
    } else if (character === '?') {
      source += '.';
    } else if (character === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) source += '\\[';
      else {
        source += `[${glob.slice(i + 1, end).replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else {
      source += character.replace(/[.+^${}()|\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 's');
}

/**
 * Whether `text` matches a glob of `*`, `?` and `[…]`, in time linear in their lengths' product
 * (no backtracking): for globs and names a project's files give, which a regular expression of
 * many `*` could take minutes over.
 */
export function globMatches(glob: string, text: string): boolean {
  const tokens: (RegExp | '*')[] = [];
  for (let i = 0; i < glob.length; i++) {
    const character = glob[i]!;
    const end = character === '[' ? glob.indexOf(']', i + 1) : -1;
    if (character === '*') {
      if (tokens.at(-1) !== '*') tokens.push('*');
    } else if (character === '?') tokens.push(/^.$/s);
    else if (end > 0) {
      tokens.push(new RegExp(`^[${glob.slice(i + 1, end).replace(/\\/g, '\\\\')}]$`));
      i = end;
    } else tokens.push(new RegExp(`^${character.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 's'));
  }
  // Greedy, going back only to the last `*`: enough, since a `*` matches any run.
  let at = 0;
  let from = 0;
  let star = -1;
  let starFrom = 0;
  while (from < text.length) {
    const token = tokens[at];
    if (token !== undefined && token !== '*' && token.test(text[from]!)) {
      at++;
      from++;
    } else if (token === '*') {
      star = at++;
      starFrom = from;
    } else if (star !== -1) {
      at = star + 1;
      from = ++starFrom;
    } else return false;
  }
  while (tokens[at] === '*') at++;
  return at === tokens.length;
}
