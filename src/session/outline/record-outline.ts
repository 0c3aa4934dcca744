/**
 * The outline of a record's parts: what the plan rules read of them and
 * nothing else, so that a resume can plan over a 100k-record history without holding
 * its texts, arguments and tool outputs.
 *
 * Every part keeps its own keys, with values reduced to what decides a rule
 * (model-entry.ts, recovery/parts.ts, repair-history.ts, detect-interruption.ts): a
 * text is empty or not, a thought is `true` or not, a call or a result keeps its id
 * and function name, any other key is content. So every predicate over parts (empty,
 * thought, real user content, model entry) and every repair (ids, names, where results
 * sit) gives the same answer on the outline as on the record;
 * test/session/outline/history-readers.test.ts holds plans built on outlines equal to plans built
 * on full records.
 *
 * A record's parts are stored as a template shared by every record of the same shape
 * (`[text, call read_file]`, `[result read_file]`, ...) plus the ids of its calls and
 * results, and become parts again (`partsOf`) only while a plan is built.
 */
import type { PartsShape } from '../parts-shape.js';
import type { Part } from '../records.js';

export type { PartsShape };

type Obj = Record<string, unknown>;

/** Where a template part holds a call or a result: its name, and whether the part had an id. */
interface IdSlot {
  readonly slot: true;
  readonly name: unknown;
  readonly hasId: boolean;
}

/** A part with its id-bearing values (functionCall, functionResponse) as IdSlots. */
export type TemplatePart = Readonly<Record<string, unknown>>;

/** A record's parts as a shared template; `ids` counts the slots that take an id from the record's ids. */
export interface PartsTemplate {
  /** Its number in the outliner's list (PartsOutliner.at). */
  readonly index: number;
  readonly parts: readonly TemplatePart[];
  /** Number of IdSlots (each takes one entry of the record's ids, `undefined` when it had none). */
  readonly slots: number;
  /** Per part: its slot when the part holds nothing else (see partsOf), else null. */
  readonly sole: ReadonlyArray<SoleSlot | null>;
}

interface SoleSlot {
  key: string;
  slot: IdSlot;
}

/** Sets an own key, also `__proto__` (plain assignment would set the prototype). */
function put(target: Obj, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function isSlotKey(key: string, value: unknown): value is Obj {
  return (key === 'functionCall' || key === 'functionResponse') && typeof value === 'object' && value !== null;
}

/**
 * The lookup of templates: a tree walked one token at a time along a record's parts (a
 * part's keys in order, each as its reduced value; a call's or result's name after it;
 * the end of each part), ending at the template of that shape. Walking it builds no
 * signature string per record (a fifth of the outline pass's own time at 100k records).
 * Tokens: the reduced values are symbols, other keys and names are the values
 * themselves (Map keys: 5 and "5" differ), a name that is not a primitive is NAME_JSON
 * then its JSON. The grammar keeps them apart: a name comes only after a slot token.
 */
interface ShapeNode {
  next: Map<unknown, ShapeNode>;
  template: PartsTemplate | null;
}

/** About 100 bytes each: a few MB at most, where a log has tens of shapes of a few tokens. */
const MAX_SHAPE_NODES = 1 << 16;

// Exported for line-scanner.ts, which reads the same tokens from a line's bytes.
export const TEXT_EMPTY = Symbol('text ""');
export const TEXT = Symbol('text');
export const THOUGHT = Symbol('thought true');
export const NOT_THOUGHT = Symbol('thought other');
export const CALL_WITH_ID = Symbol('functionCall with id');
export const CALL = Symbol('functionCall without id');
export const RESULT_WITH_ID = Symbol('functionResponse with id');
export const RESULT = Symbol('functionResponse without id');
const NAME_JSON = Symbol('name as JSON');
export const PART_END = Symbol('end of part');

/** The tokens of one part, handed one by one to `step`. */
function partTokens(part: Obj, step: (token: unknown) => void): void {
  for (const key in part) {
    if (!Object.hasOwn(part, key)) continue;
    const value = part[key];
    if (key === 'text') step(value === '' ? TEXT_EMPTY : TEXT);
    else if (key === 'thought') step(value === true ? THOUGHT : NOT_THOUGHT);
    else if (isSlotKey(key, value)) {
      const withId = Object.hasOwn(value, 'id');
      step(key === 'functionCall' ? (withId ? CALL_WITH_ID : CALL) : withId ? RESULT_WITH_ID : RESULT);
      const name = value['name'];
      if (typeof name === 'object' && name !== null) {
        step(NAME_JSON);
        step(JSON.stringify(name));
      } else step(name);
    } else step(key);
  }
  step(PART_END);
}

function templatePart(part: Obj): TemplatePart {
  const out: Obj = {};
  for (const key in part) {
    if (!Object.hasOwn(part, key)) continue;
    const value = part[key];
    if (key === 'text') put(out, key, value === '' ? '' : 't');
    else if (key === 'thought') put(out, key, value === true);
    else if (isSlotKey(key, value)) put(out, key, Object.freeze({ slot: true, name: value['name'], hasId: Object.hasOwn(value, 'id') }) satisfies IdSlot);
    else put(out, key, 0);
  }
  return Object.freeze(out);
}

/** What a shape's calls and results hold where the record's part has an id: never an id to use. */
const BLANK_ID = '\u0000id';

export class PartsOutliner {
  private readonly shapes: ShapeNode = { next: new Map(), template: null };
  /** Each template's parts with BLANK_ID for ids (PartsShape), made when first asked for. */
  private readonly blanks: (readonly Part[] | undefined)[] = [];
  /** Nodes under `shapes`. */
  private nodes = 0;
  /** Every template handed out, by index. */
  readonly list: PartsTemplate[] = [Object.freeze({ index: 0, parts: Object.freeze([]), slots: 0, sole: [] })];

  at(index: number): PartsTemplate {
    return this.list[index]!;
  }

  /** Template `index`'s parts with BLANK_ID in place of every id (PartsShape). */
  blankParts(index: number): readonly Part[] {
    let parts = this.blanks[index];
    if (parts === undefined) {
      const made = partsOf(this.list[index]!, () => BLANK_ID, 0);
      for (const part of made) deepFreeze(part);
      parts = this.blanks[index] = Object.freeze(made);
    }
    return parts;
  }

  /**
   * Adds the templates another outliner handed out (from its index 1 on: 0 is the empty
   * one every outliner has); returns the index the first of them gets here.
   */
  adopt(templates: readonly PartsTemplate[]): number {
    const first = this.list.length;
    for (const t of templates) this.list.push(Object.freeze({ ...t, index: this.list.length }));
    return first;
  }

  /**
   * The template of the parts whose tokens (partTokens') are tokens[0, count), `parts` of
   * them, when a record of that shape was outlined before; else null (the caller outlines
   * the record with `template`, which adds it). line-scanner.ts reads these tokens from a
   * line's bytes.
   */
  find(tokens: readonly unknown[], count: number, parts: number): PartsTemplate | null {
    if (parts === 0) return this.list[0]!;
    let node: ShapeNode | undefined = this.shapes;
    for (let i = 0; i < count && node !== undefined; i++) node = node.next.get(tokens[i]);
    return node?.template ?? null;
  }

  /** The template of these parts; their ids, in slot order, go to `onId`. */
  template(parts: readonly Part[], onId: (id: string | undefined) => void): PartsTemplate {
    if (parts.length === 0) return this.list[0]!;
    // Bounded: a log of ever new shapes (or tool names, or records of thousands of parts)
    // must not grow the lookup without end; past the bound a new shape is made, not kept.
    const grows = this.nodes < MAX_SHAPE_NODES;
    let node: ShapeNode | null = this.shapes;
    const step = (token: unknown): void => {
      if (node === null) return;
      let next = node.next.get(token);
      if (next === undefined && grows) {
        node.next.set(token, (next = { next: new Map(), template: null }));
        this.nodes++;
      }
      node = next ?? null;
    };
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as Obj;
      partTokens(part, step);
      for (const key of SLOT_KEYS) {
        const value = part[key];
        if (Object.hasOwn(part, key) && typeof value === 'object' && value !== null)
          onId(Object.hasOwn(value, 'id') ? ((value as Obj)['id'] as string) : undefined);
      }
    }
    const found = node as ShapeNode | null;
    if (found?.template) return found.template;
    const tparts = parts.map((p) => templatePart(p as Obj));
    let slots = 0;
    for (const p of tparts) for (const key in p) if (isSlot(p[key])) slots++;
    const template: PartsTemplate = Object.freeze({ index: this.list.length, parts: Object.freeze(tparts), slots, sole: tparts.map(soleSlot) });
    this.list.push(template);
    if (found !== null) found.template = template;
    return template;
  }
}

/**
 * Slot keys in the order `template` reads their ids. The order of a part's own keys can
 * differ from it; `partsOf` reads them in this same order, so each slot gets its own id.
 */
const SLOT_KEYS = ['functionCall', 'functionResponse'] as const;

/** The slot of a part that holds nothing but one call or one result, else null. */
function soleSlot(tpart: TemplatePart): SoleSlot | null {
  let found: SoleSlot | null = null;
  for (const key in tpart) {
    if (!Object.hasOwn(tpart, key)) continue;
    const value = tpart[key];
    if (found !== null || !isSlot(value)) return null;
    found = { key, slot: value };
  }
  return found;
}

function isSlot(value: unknown): value is IdSlot {
  return typeof value === 'object' && value !== null && (value as { slot?: unknown }).slot === true;
}

/** The outline parts of a record: its template with the record's ids (`idAt(at)`, `idAt(at + 1)`, ...) in the slots. */
export function partsOf(template: PartsTemplate, idAt: (j: number) => string | undefined, at: number): Part[] | readonly Part[] {
  if (template.slots === 0) return template.parts as readonly Part[];
  const out: Part[] = [];
  let next = at;
  for (let p = 0; p < template.parts.length; p++) {
    const tpart = template.parts[p]!;
    // The common parts (nothing but a call, nothing but a result) as literals: much cheaper
    // to allocate than a spread copy, and most of what a long history's outline is made of.
    const only = template.sole[p]!;
    if (only !== null) {
      const id = idAt(next++);
      const value = only.slot.hasId ? { id, name: only.slot.name } : { name: only.slot.name };
      out.push((only.key === 'functionCall' ? { functionCall: value } : { functionResponse: value }) as Part);
      continue;
    }
    let part: Obj | null = null;
    for (const key of SLOT_KEYS) {
      const slot = tpart[key];
      if (!isSlot(slot)) continue;
      part ??= { ...tpart };
      const value: Obj = {};
      const id = idAt(next++);
      if (slot.hasId) value['id'] = id;
      value['name'] = slot.name;
      part[key] = value;
    }
    out.push((part ?? tpart) as Part);
  }
  return out;
}

/** Freezes a blank part and the call and result objects in it (shared by many records). */
function deepFreeze(part: Part): void {
  for (const key of SLOT_KEYS) {
    const value = (part as Obj)[key];
    if (typeof value === 'object' && value !== null) Object.freeze(value);
  }
  Object.freeze(part);
}
