// An organization's rules, lists and declared fields in this process: the compiled live version of
// every active and shadow rule, the items on its lists now, and the fields it declares. Loaded with
// the organization's history in one snapshot (tenants.ts) and kept current by the live feed, which
// carries each changed rule's, item's and field's state from whichever process made the change.
// Scoring reads it as the organization's RuleSet (scoring/rules-stage.ts); each rule version is
// compiled here, in the language of the fields declared now, once, and again when they change.

import { BUILT_IN_LANGUAGE, compileRule, evaluateRule, ruleLanguage, type CompiledRule, type RuleLanguage } from '../domain/rules/expression.ts';
import { ruleInput, type Decision, type DecisionValues } from '../domain/rules/decide.ts';
import { keyEntry } from '../domain/fields.ts';
import { parseGroupBy, type InboxState } from '../domain/cases.ts';
import { CurrentItems, type ItemStay } from '../domain/rules/lists.ts';
import type { FieldState } from '../domain/fields.ts';
import type { RuleSet } from '../scoring/rules-stage.ts';
import type { RuleState } from '../storage/rule-state.ts';

export class Policy implements RuleSet {
  private readonly onBroken: (ruleId: string, e: unknown) => void;

  /** The rules evaluated, by name. */
  rules: readonly CompiledRule[] = [];
  private readonly byId = new Map<string, CompiledRule>();
  private readonly items = new CurrentItems();
  /** The fields declared now, by name. */
  readonly fields = new Map<string, FieldState>();
  /** The rule language of those fields. */
  language: RuleLanguage = BUILT_IN_LANGUAGE;
  /** Each live rule's state, to compile it again in a new language. */
  private readonly states = new Map<string, RuleState>();

  /** The inboxes, in routing order, each with its route compiled (none: a default inbox). */
  private inboxes: { state: InboxState; route: CompiledRule | undefined }[] = [];
  private readonly inboxStates = new Map<string, InboxState>();

  constructor(onBroken: (ruleId: string, e: unknown) => void = () => {}) {
    this.onBroken = onBroken;
  }

  /** An inbox's new state: routed to while it exists. */
  setInbox(s: InboxState): void {
    if (s.deleted) this.inboxStates.delete(s.id);
    else this.inboxStates.set(s.id, s);
    this.compileRoutes();
  }

  private compileRoutes(): void {
    const states = [...this.inboxStates.values()];
    // Inboxes with a route first, in their order; the defaults after them.
    states.sort((a, b) => Number(a.route === null) - Number(b.route === null) || a.position - b.position || (a.id < b.id ? -1 : 1));
    this.inboxes = [];
    for (const state of states) {
      let route: CompiledRule | undefined;
      if (state.route !== null) {
        try {
          route = compileRule(
            {
              id: state.id,
              name: state.name,
              version: 0,
              action: 'review',
              status: 'active',
              expression: state.route,
              lists: new Map(Object.entries(state.route_lists)),
            },
            this.language,
          );
        } catch (e) {
          this.onBroken(state.id, e);
          continue;
        }
      }
      this.inboxes.push({ state, route });
    }
  }

  /**
   * The inbox a decision goes to and the entity whose case it opens or joins: the first inbox
   * whose route matches it (a default inbox when none does), if that inbox takes decisions of its
   * kind (every review; a block when it says so); undefined otherwise. A route reads what a rule
   * reads: the decision's values, its features (`features` builds them when a route reads one) and
   * the organization's lists as they are at the payment's time. A payment without the key field an
   * inbox groups by is grouped by its customer.
   */
  route(
    values: DecisionValues,
    decision: Decision,
    features: () => Map<string, number> = () => new Map(),
  ): { inbox: InboxState; kind: 'customer' | 'merchant' | 'key'; key: string } | undefined {
    if ((decision !== 'review' && decision !== 'block') || this.inboxes.length === 0) return undefined;
    const input = ruleInput(values, features, this.language);
    const lookup = (listId: string, value: string) => this.has(listId, value, values.time);
    const chosen = this.inboxes.find((i) => i.route === undefined || evaluateRule(i.route, input, lookup).matched);
    if (!chosen || (decision === 'block' && !chosen.state.on_block)) return undefined;
    return caseOf(chosen.state, values.customer_id, values.merchant_id, values.fields);
  }

  /**
   * The inbox and entity of a case a server opens on purpose on a transaction, whatever its
   * decision was: the first inbox whose route matches what the decision saw (`values`; undefined
   * for a transaction never scored, which no route matches), else the first default inbox, else the
   * first inbox in routing order; undefined only without any inbox. Grouped as `route` groups.
   */
  routeOpened(
    values: DecisionValues | undefined,
    parties: { customer_id: string; merchant_id: string; fields?: DecisionValues['fields'] },
  ): { inbox: InboxState; kind: 'customer' | 'merchant' | 'key'; key: string } | undefined {
    const input = values && ruleInput(values, () => new Map(), this.language);
    const chosen =
      (input && this.inboxes.find((i) => i.route === undefined || evaluateRule(i.route, input, () => false).matched)?.state) ??
      this.inboxes.find((i) => i.route === undefined)?.state ??
      this.inboxes[0]?.state ??
      [...this.inboxStates.values()].sort((a, b) => a.position - b.position)[0];
    if (!chosen) return undefined;
    return caseOf(chosen, parties.customer_id, parties.merchant_id, values?.fields ?? parties.fields);
  }

  /** A field's new state: held while declared, dropped once retired. The rules are compiled again
   *  in the new language: a rule reading a retired field then finds no value and does not match. */
  setField(s: FieldState): void {
    if (s.retired) this.fields.delete(s.name);
    else this.fields.set(s.name, s);
    const language = ruleLanguage(this.fields.values());
    if (language === this.language) return;
    this.language = language;
    this.byId.clear();
    for (const state of this.states.values()) this.setRule(state);
    this.compileRoutes();
  }

  /** A rule's new state: evaluated while active or shadow, else dropped. A version that no longer
   *  compiles (it was checked when saved) is dropped and reported, never evaluated. */
  setRule(s: RuleState): void {
    const held = this.byId.get(s.id);
    const live = !s.deleted && (s.status === 'active' || s.status === 'shadow') && s.expression !== null && s.action !== null && s.live_version !== null;
    if (live) this.states.set(s.id, s);
    else this.states.delete(s.id);
    if (!live) {
      if (held) this.byId.delete(s.id);
    } else if (!held || held.version !== s.live_version || held.status !== s.status || held.name !== s.name) {
      try {
        this.byId.set(
          s.id,
          compileRule(
            {
              id: s.id,
              name: s.name,
              version: s.live_version!,
              action: s.action!,
              status: s.status as 'active' | 'shadow',
              expression: s.expression!,
              lists: new Map(Object.entries(s.lists)),
            },
            this.language,
          ),
        );
      } catch (e) {
        this.byId.delete(s.id);
        this.onBroken(s.id, e);
      }
    } else return;
    this.rules = [...this.byId.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  applyStay(s: ItemStay): void {
    this.items.apply(s);
  }

  has(listId: string, value: string, at: number): boolean {
    return this.items.has(listId, value, at);
  }
}

/** The case a decision goes to in `inbox`: its entity as the inbox groups (a key field's value when
 *  the payment carried one, else the customer). */
function caseOf(
  inbox: InboxState,
  customerId: string,
  merchantId: string,
  fields: DecisionValues['fields'],
): { inbox: InboxState; kind: 'customer' | 'merchant' | 'key'; key: string } {
  const group = parseGroupBy(inbox.group_by);
  if (group?.kind === 'merchant') return { inbox, kind: 'merchant', key: merchantId };
  const value = group?.kind === 'key' ? fields?.[group.field] : undefined;
  if (group?.kind === 'key' && typeof value === 'string') return { inbox, kind: 'key', key: keyEntry(group.field, value) };
  return { inbox, kind: 'customer', key: customerId };
}
