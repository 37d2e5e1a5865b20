import { decodeQR } from 'qr/decode.js';

/** A terminal theme: the colours a cell shows when the program sets none. */
export type Theme = 'dark' | 'light';

/** A grid of QR modules, `true` for dark, row by row. */
export type Modules = boolean[][];

const SGR = /\x1b\[([0-9;]*)m/y;
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** xterm's sixteen basic colours, as light (true) or dark. */
const BASIC_IS_LIGHT = [
  false,
  false,
  false,
  false,
  false,
  false,
  false,
  true,
  false,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
];

/** Whether xterm colour `index` (0–255) is light, by its luminance. */
function isLight256(index: number): boolean {
  if (index < 16) return BASIC_IS_LIGHT[index]!;
  if (index >= 232) return 8 + 10 * (index - 232) >= 128;
  const level = (step: number) => (step === 0 ? 0 : 55 + 40 * step);
  const cube = index - 16;
  const [r, g, b] = [level(Math.floor(cube / 36)), level(Math.floor(cube / 6) % 6), level(cube % 6)];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b >= 128;
}

interface Pen {
  fg: boolean | undefined; // light?, undefined for the theme's default
  bg: boolean | undefined;
  reverse: boolean;
}

function applySgr(pen: Pen, params: string): void {
  const codes = params === '' ? [0] : params.split(';').map(Number);
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!;
    if (code === 0) Object.assign(pen, { fg: undefined, bg: undefined, reverse: false });
    else if (code === 7) pen.reverse = true;
    else if (code === 27) pen.reverse = false;
    else if (code === 39) pen.fg = undefined;
    else if (code === 49) pen.bg = undefined;
    else if (code >= 30 && code <= 37) pen.fg = BASIC_IS_LIGHT[code - 30];
    else if (code >= 90 && code <= 97) pen.fg = BASIC_IS_LIGHT[code - 90 + 8];
    else if (code >= 40 && code <= 47) pen.bg = BASIC_IS_LIGHT[code - 40];
    else if (code >= 100 && code <= 107) pen.bg = BASIC_IS_LIGHT[code - 100 + 8];
    else if ((code === 38 || code === 48) && codes[i + 1] === 5) {
      const light = isLight256(codes[i + 2]!);
      if (code === 38) pen.fg = light;
      else pen.bg = light;
      i += 2;
    } else throw new Error(`an SGR code this reader does not know: ${code}`);
  }
}

/**
 * Reads one line as a terminal with `theme` shows it: each half-block cell as its upper and its
 * lower half, each dark (true) or light. Undefined when the line holds anything but half blocks.
 */
function readHalfBlocks(line: string, theme: Theme): [boolean[], boolean[]] | undefined {
  const pen: Pen = { fg: undefined, bg: undefined, reverse: false };
  const upper: boolean[] = [];
  const lower: boolean[] = [];
  for (let i = 0; i < line.length;) {
    SGR.lastIndex = i;
    const sgr = SGR.exec(line);
    if (sgr) {
      applySgr(pen, sgr[1]!);
      i = SGR.lastIndex;
      continue;
    }
    const char = line[i++]!;
    if (!' ▀▄█'.includes(char)) return undefined;
    let fgLight = pen.fg ?? theme === 'dark';
    let bgLight = pen.bg ?? theme === 'light';
    if (pen.reverse) [fgLight, bgLight] = [bgLight, fgLight];
    // The glyph's part is drawn in the foreground colour, the rest of the cell in the background.
    upper.push(!('▀█'.includes(char) ? fgLight : bgLight));
    lower.push(!('▄█'.includes(char) ? fgLight : bgLight));
  }
  return upper.length > 0 ? [upper, lower] : undefined;
}

/**
 * The QR code in captured terminal text, as the modules a camera would see on a terminal of
 * `theme`: the first run of lines made only of half blocks and spaces, two modules a line.
 */
export function readTerminalQr(text: string, theme: Theme): Modules {
  const modules: Modules = [];
  for (const line of text.split('\n')) {
    const halves = readHalfBlocks(line, theme);
    if (halves) modules.push(...halves);
    else if (modules.length > 0) break;
  }
  if (modules.length === 0) throw new Error('no half-block lines in the text');
  if (modules.some((row) => row.length !== modules[0]!.length))
    throw new Error('the code is not square-edged');
  return modules;
}

/** The text in `modules`, photographed at 6 pixels a module, or undefined if it does not read. */
export function decodeModules(modules: Modules): string | undefined {
  const scale = 6;
  const width = modules[0]!.length * scale;
  const height = modules.length * scale;
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const value = modules[Math.floor(y / scale)]![Math.floor(x / scale)] ? 0 : 255;
      data.fill(value, (y * width + x) * 4, (y * width + x) * 4 + 3);
      data[(y * width + x) * 4 + 3] = 255;
    }
  try {
    return decodeQR({ width, height, data });
  } catch {
    return undefined;
  }
}

/** The light margin on each side of the dark modules. */
export function quietZone(modules: Modules): { top: number; bottom: number; left: number; right: number } {
  const rows = modules.map((row) => row.includes(true));
  const columns = modules[0]!.map((_, x) => modules.some((row) => row[x]));
  return {
    top: rows.indexOf(true),
    bottom: rows.length - 1 - rows.lastIndexOf(true),
    left: columns.indexOf(true),
    right: columns.length - 1 - columns.lastIndexOf(true),
  };
}

/**
 * The rows and columns `text` takes on a terminal `columns` wide, counting long lines as they
 * wrap and the row the cursor waits on after a final newline.
 */
export function screenSize(text: string, columns: number): { rows: number; columns: number } {
  const widths = text.split('\n').map((line) => [...line.replace(ANSI, '')].length);
  return {
    rows: widths.reduce((sum, width) => sum + Math.max(1, Math.ceil(width / columns)), 0),
    columns: Math.max(...widths),
  };
}
