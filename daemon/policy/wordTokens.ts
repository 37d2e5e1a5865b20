import type { Piece, Word } from './commandWords.ts';

/**
 * A word character by character, each quoted or not, and its computed values: how the shell
 * sees it where quoting may change mid-construct (`{"tch",x}`, `.la["t"]ch`).
 */
export type Token = { character: string; glob: boolean } | { computed: string };

export const tokensOf = (word: Word): Token[] =>
  word.flatMap((piece): Token[] =>
    'text' in piece ? [...piece.text].map((character) => ({ character, glob: piece.glob })) : [piece],
  );

/** Tokens back to pieces: adjacent characters quoted alike make one piece, as the lexer makes them. */
export function wordOf(tokens: Token[]): Word {
  const pieces: Piece[] = [];
  for (const token of tokens) {
    const last = pieces.at(-1);
    if (!('character' in token)) pieces.push(token);
    else if (last && 'text' in last && last.glob === token.glob) last.text += token.character;
    else pieces.push({ text: token.character, glob: token.glob });
  }
  return pieces;
}

/** Whether a token is `character`, unquoted: one the shell reads as syntax. */
export const unquoted = (token: Token | undefined, character: string) =>
  token !== undefined && 'character' in token && token.glob && token.character === character;
