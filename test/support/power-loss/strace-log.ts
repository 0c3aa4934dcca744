/**
 * Reads the output of `strace -f -yy -xx -s N -o FILE`: one syscall per line with the
 * pid first, every string and fd decoration hex-escaped (so a quote, comma or bracket
 * inside data can never confuse the splitter). A call another thread interrupted is
 * printed in two halves (`<unfinished ...>` and `<... name resumed>`); they are joined
 * here, keeping both positions: `entry` (when the call began) and `exit` (when it
 * returned), as line numbers of the trace.
 */

export interface Syscall {
  pid: number;
  name: string;
  /** Top-level arguments, as printed (strings still quoted and escaped). */
  args: string[];
  /** The return value as printed, e.g. `3</path>` (escaped), `0`, `-1 ENOENT (...)`. */
  ret: string;
  entry: number;
  exit: number;
}

const COMPLETE = /^(\d+) +([a-z0-9_]+)\((.*)\) += (.*)$/s;
const UNFINISHED = /^(\d+) +([a-z0-9_]+)\((.*) <unfinished \.\.\.>$/s;
const RESUMED = /^(\d+) +<\.\.\. ([a-z0-9_]+) resumed>(.*)\) += (.*)$/s;

export function parseStrace(text: string): Syscall[] {
  const calls: Syscall[] = [];
  const pending = new Map<number, { name: string; args: string; entry: number }>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let m = COMPLETE.exec(line);
    if (m && !line.includes('<unfinished ...>')) {
      calls.push({ pid: Number(m[1]), name: m[2]!, args: splitArgs(m[3]!), ret: m[4]!.trim(), entry: i, exit: i });
      continue;
    }
    m = UNFINISHED.exec(line);
    if (m) {
      pending.set(Number(m[1]), { name: m[2]!, args: m[3]!, entry: i });
      continue;
    }
    m = RESUMED.exec(line);
    if (m) {
      const pid = Number(m[1]);
      const first = pending.get(pid);
      pending.delete(pid);
      if (!first || first.name !== m[2]) continue;
      const rest = m[3]!.replace(/^, */, '');
      const joined = rest === '' ? first.args : first.args === '' ? rest : `${first.args}, ${rest}`;
      calls.push({ pid, name: first.name, args: splitArgs(joined), ret: m[4]!.trim(), entry: first.entry, exit: i });
    }
  }
  return calls;
}

/** Splits at top-level commas: outside strings, brackets, braces and `<...>` decorations. */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '(' || c === '[' || c === '{' || c === '<') depth++;
    else if (c === ')' || c === ']' || c === '}' || c === '>') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = text.slice(start).trim();
  if (last !== '' || out.length > 0) out.push(last);
  return out;
}

/** `"\x41\x42"` (maybe followed by `...` when strace cut it) to bytes. */
export function decodeString(token: string): Buffer {
  const m = /"((?:\\x[0-9a-f]{2}|[^"])*)"/.exec(token);
  if (!m) return Buffer.alloc(0);
  return unescape(m[1]!);
}

function unescape(body: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < body.length;) {
    if (body[i] === '\\' && body[i + 1] === 'x') {
      bytes.push(parseInt(body.slice(i + 2, i + 4), 16));
      i += 4;
    } else {
      bytes.push(body.charCodeAt(i));
      i += 1;
    }
  }
  return Buffer.from(bytes);
}

/** `3</path>` or `AT_FDCWD</cwd>`: the number (AT_FDCWD is -100) and the decoration, decoded. */
export function parseFd(token: string): { fd: number; path: string | null } {
  const m = /^(-?\d+|AT_FDCWD)(?:<(.*)>)?$/s.exec(token.trim());
  if (!m) return { fd: NaN, path: null };
  const fd = m[1] === 'AT_FDCWD' ? -100 : Number(m[1]);
  return { fd, path: m[2] === undefined ? null : unescape(m[2]).toString('utf8') };
}

/** The numeric return value (`-1 ENOENT ...` gives -1). */
export function retNumber(ret: string): number {
  const m = /^(-?\d+)/.exec(ret);
  return m ? Number(m[1]) : NaN;
}

/** The iovecs of writev/pwritev: `[{iov_base="..", iov_len=N}, ...]`, concatenated. */
export function decodeIovecs(token: string): Buffer {
  const parts: Buffer[] = [];
  for (const m of token.matchAll(/iov_base="((?:\\x[0-9a-f]{2}|[^"])*)"/g)) parts.push(unescape(m[1]!));
  return Buffer.concat(parts);
}
