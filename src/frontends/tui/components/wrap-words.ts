/**
 * Greedy word wrap for the framed blocks (INFO, panels). Ink's own wrapping
 * keeps the space it breaks at, so a wrapped row would start with a blank;
 * breaking at word boundaries here keeps the left edge of a notice straight.
 * Spacing inside a row is kept; a word longer than a row is cut.
 */
export function wrapWords(text: string, width: number): string[] {
  const rows: string[] = [];
  const w = Math.max(1, width);
  const len = (s: string) => [...s].length;
  for (const line of text.split('\n')) {
    let row = '';
    // Each token is a word with the blanks before it; a row's first word drops them (except the line's own indent).
    for (const token of line.match(/\s*\S+/g) ?? ['']) {
      if (len(row + token) <= w) {
        row += token;
        continue;
      }
      if (row !== '') rows.push(row);
      let rest = token.trimStart();
      while (len(rest) > w) {
        rows.push([...rest].slice(0, w).join(''));
        rest = [...rest].slice(w).join('');
      }
      row = rest;
    }
    rows.push(row);
  }
  return rows;
}
