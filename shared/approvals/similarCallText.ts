import type { SimilarCall } from '../messages/approvals.ts';

/** A similar-call rule's command as the phone and `latch policy grants` show it: `git push origin ‹name›`. */
export const similarCommandText = (similar: Pick<SimilarCall, 'words' | 'thenAnyName'>): string =>
  `${similar.words.join(' ')}${similar.thenAnyName ? ' ‹name›' : ''}`;
