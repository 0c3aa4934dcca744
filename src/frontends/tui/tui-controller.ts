/**
 * The terminal UI's one piece of logic: keys and commands become SessionRuntime
 * calls, runtime events become UI state (turn-items.ts). React components read
 * the state through `subscribe`/`getState` and call the methods below; they
 * never touch the runtime. One runtime is open at a time (/clear and /resume
 * close it and open the next), so there is never a second agent loop.
 */
import { MendError, errorCodeOf, errorMessageOf } from '../../errors.js';
import type { ToolCallInfo } from '../../engine/engine-events.js';
import type { ActiveWriter } from '../../session/active-writer.js';
import { SessionRuntime, type HostOpenRequest, type RuntimeDeps, type RuntimeEvent } from '../../runtime/session-runtime.js';
import { APPROVAL_MODES, type ApprovalMode } from '../../wire/approval-modes.js';
import { InlineApprovals, type ApprovalChoice } from './inline-approvals.js';
import { planPanel } from './plan-details.js';
import { sessionIntro } from './session-intro.js';
import { loadPickerRows, type PickerRow } from './session-picker-rows.js';
import { HELP_LINES, parseSlashCommand, type SlashCommand } from './slash-commands.js';
import { addDone, applyEvent, emptyView, type TurnView } from './turn-items.js';
import type { UiItem } from './ui-items.js';

export type { ApprovalChoice };

export interface TuiState {
  /** Bumped when the static region starts over (/clear, /resume, showing thoughts). */
  epoch: number;
  view: TurnView;
  busy: boolean;
  sessionId: string;
  model: string | null;
  approvalMode: ApprovalMode;
  /** The holder of a session opened read-only. */
  readOnly: ActiveWriter | null;
  approval: ToolCallInfo | null;
  picker: { rows: PickerRow[]; selected: number } | null;
  /** A prompt waiting for the confirmation a degraded history needs (--accept-degraded semantics). */
  confirmDegraded: string | null;
  showThoughts: boolean;
  /** A first Ctrl-C on an idle prompt: the next one exits. */
  exitArmed: boolean;
  exited: boolean;
}

export interface ControllerDeps {
  runtime: RuntimeDeps;
  modelName: (model: string | undefined) => string | null;
  /** Clears the terminal before the static region is drawn again (a no-op in tests). */
  clearScreen: () => void;
}

export class TuiController {
  private state: TuiState;
  private readonly listeners = new Set<() => void>();
  private runtime: SessionRuntime | null = null;
  private unsubscribe: () => void = () => {};
  /** The plan id the INFO item showed: /continue runs only that plan (the runtime revalidates it). */
  private noticePlanId: string | undefined;
  private readonly approvals = new InlineApprovals((call) => this.set({ approval: call }));
  private resolveExit!: () => void;
  readonly exited: Promise<void> = new Promise((resolve) => (this.resolveExit = resolve));

  constructor(
    private readonly deps: ControllerDeps,
    private baseRequest: HostOpenRequest,
  ) {
    const settings = baseRequest.settings;
    this.state = {
      epoch: 0,
      view: emptyView(),
      busy: false,
      sessionId: '',
      model: deps.modelName(settings.model),
      approvalMode: settings.approvalMode,
      readOnly: null,
      approval: null,
      picker: null,
      confirmDegraded: null,
      showThoughts: false,
      exitArmed: false,
      exited: false,
    };
  }

  // ---- store for React ----------------------------------------------------------------------

  getState = (): TuiState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private set(patch: Partial<TuiState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of [...this.listeners]) l();
  }

  private add(item: UiItem): void {
    this.set({ view: addDone(this.state.view, item) });
  }

  private newId = (): string => this.deps.runtime.newId();

  // ---- opening ------------------------------------------------------------------------------

  /** Opens the session the command line names; when that fails, says why and starts a new one. */
  async start(firstPrompt?: string): Promise<void> {
    try {
      await this.open(this.baseRequest);
    } catch (error) {
      this.add({ id: this.newId(), type: 'error', code: errorCodeOf(error), message: errorMessageOf(error) });
      await this.open({ ...this.baseRequest, target: { type: 'new' }, fork: undefined });
    }
    if (firstPrompt !== undefined && firstPrompt.trim() !== '') this.submit(firstPrompt);
  }

  private async open(request: HostOpenRequest): Promise<void> {
    // A writer first; a session another live process holds is shown read-only with its holder (the runtime decides).
    const runtime = await SessionRuntime.openForHost(this.deps.runtime, { ...request, access: { mode: 'write_or_read_only' } });
    this.runtime = runtime;
    this.approvals.reset();
    this.noticePlanId = undefined;
    this.unsubscribe = runtime.subscribe((event) => this.onEvent(event));
    runtime.setApprovalHandler(() => this.approvals.ask);
    await runtime.setApprovalMode(this.state.approvalMode);

    const { items, noticePlanId } = await sessionIntro(runtime, this.deps.runtime.scope, this.newId);
    this.noticePlanId = noticePlanId;
    this.set({
      view: { ...emptyView([...this.state.view.done, ...items]) },
      sessionId: runtime.sessionId,
      readOnly: runtime.activeWriter,
      model: this.deps.modelName(runtime.settings.model),
      busy: false,
    });
  }

  /**
   * Closes the open runtime and opens the next on a cleared screen. Refused while a turn
   * runs (it would be aborted without a word); a target that cannot be opened is said and
   * the current session stays; a later failure reopens the session that was open.
   */
  private async switchTo(request: HostOpenRequest): Promise<void> {
    const current = this.runtime;
    if (current?.busy) {
      const what = request.target.type === 'new' ? '/clear' : '/resume';
      this.add({
        id: this.newId(),
        type: 'error',
        code: 'turn_running',
        message: `a turn is running: stop it with Ctrl-C (or wait for it to end), then ${what}`,
      });
      return;
    }
    if (request.target.type === 'resume') {
      try {
        await this.checkResumeTarget(request.target.target);
      } catch (error) {
        this.add({
          id: this.newId(),
          type: 'error',
          code: errorCodeOf(error),
          message: `${errorMessageOf(error)}; still in session ${current?.sessionId ?? ''}`,
        });
        return;
      }
    }
    const previous = current ? await this.reopenRequest(current) : undefined;
    await this.closeRuntime();
    this.deps.clearScreen();
    this.set({ epoch: this.state.epoch + 1, view: emptyView(), picker: null, confirmDegraded: null });
    try {
      await this.open(request);
    } catch (error) {
      this.add({ id: this.newId(), type: 'error', code: errorCodeOf(error), message: errorMessageOf(error) });
      try {
        if (!previous) throw error;
        await this.open(previous);
      } catch {
        await this.open({ ...request, target: { type: 'new' }, fork: undefined });
      }
    }
  }

  /** What /resume names must be a session that exists, before the open one is closed. */
  private async checkResumeTarget(target: string): Promise<void> {
    const { store, scope } = this.deps.runtime;
    const ref = await store.resolve(scope, target);
    if (!(await store.exists(ref))) throw new MendError('session_not_found', `session not found: ${target}`, { path: ref.location });
  }

  /** How to come back to a session: resumed when it has records, else new under the same id. */
  private async reopenRequest(runtime: SessionRuntime): Promise<HostOpenRequest> {
    const exists = await this.deps.runtime.store.exists(runtime.ref).catch(() => false);
    return exists
      ? { ...this.baseRequest, target: { type: 'resume', target: runtime.sessionId || runtime.ref.location }, fork: undefined }
      : { ...this.baseRequest, target: { type: 'new', sessionId: runtime.sessionId }, fork: undefined };
  }

  private async closeRuntime(): Promise<void> {
    const runtime = this.runtime;
    if (!runtime) return;
    this.runtime = null;
    this.approvals.reset();
    runtime.interrupt();
    await runtime.close();
    this.unsubscribe();
  }

  // ---- runtime events -----------------------------------------------------------------------

  private onEvent(event: RuntimeEvent): void {
    const view = applyEvent(this.state.view, event, this.newId);
    if (event.type === 'turn_started') this.set({ view, busy: true, exitArmed: false });
    else if (event.type === 'turn_finished' || event.type === 'turn_failed' || event.type === 'turn_aborted') {
      // The runtime still counts the ending turn as running here; a queued one sends turn_started again.
      this.set({ view, busy: false });
    } else if (view !== this.state.view) this.set({ view });
  }

  // ---- input --------------------------------------------------------------------------------

  /** Enter on the prompt line: a slash command or a prompt. */
  submit(text: string): void {
    this.set({ exitArmed: false });
    const command = parseSlashCommand(text);
    if (command) void this.command(command);
    else this.sendPrompt(text, false);
  }

  private sendPrompt(text: string, confirmed: boolean): void {
    const runtime = this.runtime;
    if (!runtime) return;
    if (!runtime.writable) {
      // Read-only because another process held it: the runtime tries again (that holder may be gone).
      void runtime.takeLease().then((locked) => {
        if (this.runtime !== runtime) return;
        this.set({ readOnly: runtime.activeWriter });
        if (locked === null) this.sendPrompt(text, confirmed);
        else
          this.add({
            id: this.newId(),
            type: 'error',
            code: 'session_locked',
            message: `read-only: ${this.readOnlyReason()}; /resume another session or /clear for a new one`,
          });
      });
      return;
    }
    if (confirmed) runtime.setAcceptDegraded(true);
    // The one policy decides whether a prompt may run on this history; a degraded one needs a confirmation first.
    const decision = runtime.decide({ type: 'prompt', acceptDegraded: runtime.settings.acceptDegraded });
    if (decision.action === 'refused' && decision.code === 'degraded_history') {
      this.set({ confirmDegraded: text });
      return;
    }
    // The runtime runs turns one at a time; say so rather than look unresponsive.
    if (runtime.busy) this.add({ id: this.newId(), type: 'status', text: 'queued: it runs when the current turn ends' });
    void runtime.prompt([{ text }]);
  }

  /** The answer to the degraded-history confirmation: yes sends the waiting prompt (and later ones). */
  confirmDegraded(yes: boolean): void {
    const text = this.state.confirmDegraded;
    this.set({ confirmDegraded: null });
    if (text === null) return;
    if (yes) this.sendPrompt(text, true);
    else this.add({ id: this.newId(), type: 'status', text: 'not sent: the history stays as it is' });
  }

  private async command(command: SlashCommand): Promise<void> {
    const runtime = this.runtime;
    switch (command.name) {
      case 'continue': {
        if (!runtime) return;
        const answer = await runtime.continueLastTurn({ planId: this.noticePlanId });
        this.set({ readOnly: runtime.activeWriter });
        if (!answer.accepted) this.add({ id: this.newId(), type: 'error', code: answer.code, message: answer.message });
        return;
      }
      case 'plan': {
        // The runtime re-checks the holder: one that died since the session opened is noticed here.
        const current = runtime ? await runtime.currentPlan() : null;
        if (runtime) this.set({ readOnly: runtime.activeWriter });
        if (!current) this.add({ id: this.newId(), type: 'status', text: 'no plan: this session has no records yet' });
        else this.add(planPanel(current.plan, current.loaded.conversation, this.newId));
        return;
      }
      case 'help':
        this.add({ id: this.newId(), type: 'panel', label: 'HELP', tone: 'note', title: 'commands and keys', lines: HELP_LINES });
        return;
      case 'model':
        if (command.model && runtime) {
          runtime.setModel(command.model);
          this.set({ model: this.deps.modelName(command.model) ?? command.model });
        }
        this.add({ id: this.newId(), type: 'status', text: `model: ${this.state.model ?? '(none configured)'}` });
        return;
      case 'clear':
        await this.switchTo({ ...this.baseRequest, target: { type: 'new' }, fork: undefined });
        return;
      case 'resume':
        if (command.target) await this.switchTo({ ...this.baseRequest, target: { type: 'resume', target: command.target }, fork: undefined });
        else await this.openPicker();
        return;
      case 'quit':
        await this.quit();
        return;
      case 'unknown':
        this.add({ id: this.newId(), type: 'error', code: 'usage', message: `unknown command ${command.text.split(/\s/)[0]}; /help lists them` });
        return;
    }
  }

  // ---- the session picker --------------------------------------------------------------------

  private async openPicker(): Promise<void> {
    try {
      const rows = await loadPickerRows(this.deps.runtime, this.runtime?.sessionId ?? '');
      if (rows.length === 0) this.add({ id: this.newId(), type: 'status', text: 'no sessions for this project' });
      else this.set({ picker: { rows, selected: 0 } });
    } catch (error) {
      this.add({ id: this.newId(), type: 'error', code: errorCodeOf(error), message: errorMessageOf(error) });
    }
  }

  movePicker(delta: number): void {
    const picker = this.state.picker;
    if (!picker) return;
    const selected = Math.min(picker.rows.length - 1, Math.max(0, picker.selected + delta));
    this.set({ picker: { ...picker, selected } });
  }

  async choosePicked(): Promise<void> {
    const row = this.state.picker?.rows[this.state.picker.selected];
    this.set({ picker: null });
    if (row) await this.switchTo({ ...this.baseRequest, target: { type: 'resume', target: row.target }, fork: undefined });
  }

  cancelPicker(): void {
    this.set({ picker: null });
  }

  // ---- approvals ----------------------------------------------------------------------------

  answerApproval(choice: ApprovalChoice): void {
    this.approvals.answer(choice);
  }

  cycleApprovalMode(): void {
    const next = APPROVAL_MODES[(APPROVAL_MODES.indexOf(this.state.approvalMode) + 1) % APPROVAL_MODES.length]!;
    // A key press does not wait for the change's record; a record that fails is already a warning
    // item, and anything else the change throws is shown as an error item.
    this.runtime
      ?.setApprovalMode(next)
      .catch((error: unknown) => this.add({ id: this.newId(), type: 'error', code: errorCodeOf(error), message: errorMessageOf(error) }));
    this.set({ approvalMode: next });
  }

  // ---- stopping -----------------------------------------------------------------------------

  /** Ctrl-C: stops the running turn (recorded as aborted); on an idle prompt the second one exits. */
  interrupt(): void {
    const runtime = this.runtime;
    if (runtime?.busy || this.approvals.waiting) {
      this.approvals.deny('turn interrupted by the user');
      runtime?.interrupt();
      this.set({ exitArmed: false });
      return;
    }
    if (this.state.exitArmed) void this.quit();
    else this.set({ exitArmed: true });
  }

  disarmExit(): void {
    if (this.state.exitArmed) this.set({ exitArmed: false });
  }

  toggleThoughts(): void {
    this.deps.clearScreen();
    this.set({ showThoughts: !this.state.showThoughts, epoch: this.state.epoch + 1 });
  }

  async quit(): Promise<void> {
    if (this.state.exited) return;
    await this.closeRuntime();
    this.set({ exited: true });
    this.resolveExit();
  }

  private readOnlyReason(): string {
    const holder = this.runtime?.activeWriter;
    return holder ? `the session is in use by ${holder.host} pid ${holder.pid}` : 'the session was opened read-only';
  }
}
