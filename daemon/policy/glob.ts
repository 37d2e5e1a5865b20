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
