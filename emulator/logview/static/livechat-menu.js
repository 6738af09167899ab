// The web chat's menu of other activities: event (name, JSON value), invoke (name, value; the
// bot's invoke response is shown under it), endOfConversation, typing, messageReaction,
// conversationUpdate and deleteUserData. With a skill manifest (a file picked here, or the one
// botemu serve --manifest gives every page), the activities it declares are listed too, and the
// value of one is a form made from its JSON Schema (livechat-form.js); botemu checks the bot's
// answer against its resultValue.
// Values are JSON, checked here before they go out (botemu checks them again).

import { h, fill } from './dom.js';
import { schemaForm } from './livechat-form.js';
import { findingsView } from './livechat-render.js';

/** Which inputs each type shows, and the activity it makes from them. */
const TYPES = {
  event: { fields: ['name', 'value'], make: (f) => ({ name: f.name, ...(f.value === undefined ? {} : { value: f.value }) }) },
  invoke: { fields: ['name', 'value'], make: (f) => ({ name: f.name, ...(f.value === undefined ? {} : { value: f.value }) }) },
  endOfConversation: { fields: ['code'], make: (f) => (f.code ? { code: f.code } : {}) },
  typing: { fields: [], make: () => ({}) },
  messageReaction: { fields: ['reaction'], make: (f) => ({ reactionsAdded: [{ type: f.reaction || 'like' }] }) },
  conversationUpdate: { fields: ['members'], make: (f) => f.members },
  deleteUserData: { fields: [], make: () => ({}) },
};
const MANIFEST = 'manifest:';
const MAX_MANIFEST = 200 * 1024;
const DEFAULT_MEMBERS = '{"membersAdded": [{"id": "user-2", "name": "Second user"}]}';

export class ActivityMenu {
  /** onSend(activity); onManifest(text, name) (text null: forget it). */
  constructor(onSend, onManifest) {
    this.onSend = onSend;
    this.onManifest = onManifest;
    this.limits = {};
    this.declared = new Map();
    this.form = null;
    this.type = h('select', { id: 'livechat-type', 'aria-label': 'Activity type', onchange: () => this.shape() });
    this.inputs = {
      name: h('input', { id: 'livechat-name', type: 'text', 'aria-label': 'Name', placeholder: 'name, e.g. tokens/response' }),
      text: h('input', { id: 'livechat-activity-text', type: 'text', 'aria-label': 'Text' }),
      value: h('textarea', { id: 'livechat-value', rows: 4, spellcheck: 'false', 'aria-label': 'Value (JSON)', placeholder: '{"key": "value"}' }),
      code: h('input', { id: 'livechat-code', type: 'text', value: 'completedSuccessfully', 'aria-label': 'Code' }),
      reaction: h('input', { id: 'livechat-reaction', type: 'text', value: 'like', 'aria-label': 'Reaction' }),
      members: h('textarea', { id: 'livechat-members', rows: 3, spellcheck: 'false', 'aria-label': 'Members (JSON)' }),
    };
    this.inputs.members.value = DEFAULT_MEMBERS;
    this.labels = Object.fromEntries(Object.entries(this.inputs).map(([name, input]) => [name,
      h('label', { class: 'livechat-field' }, h('span', {}, input.getAttribute('aria-label')), input)]));
    this.formSlot = h('div', { class: 'livechat-form-slot' });
    this.described = h('p', { class: 'muted livechat-described' });
    this.error = h('p', { class: 'error livechat-menu-error', role: 'alert', hidden: true });
    this.sendButton = h('button', { type: 'submit', id: 'livechat-send-activity' }, 'Send activity');
    const form = h('form', { class: 'livechat-menu-form', 'aria-label': 'Other activities' },
      h('label', { class: 'livechat-field' }, h('span', {}, 'type'), this.type),
      Object.values(this.labels), this.formSlot, this.sendButton, this.described, this.error);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.root = h('details', { class: 'livechat-menu', id: 'livechat-menu' },
      h('summary', {}, 'Other activities'), form, this.manifestBar());
    this.fillTypes();
  }

  manifestBar() {
    this.file = h('input', { type: 'file', id: 'livechat-manifest', accept: '.json,.yaml,.yml,application/json', 'aria-label': 'Skill manifest' });
    this.file.addEventListener('change', () => this.pick());
    this.forget = h('button', { type: 'button', hidden: true, onclick: () => this.onManifest(null) }, 'Forget the manifest');
    this.manifestState = h('span', { id: 'livechat-manifest-state', class: 'muted', role: 'status' });
    this.manifestFindings = h('div', { class: 'livechat-manifest-findings' });
    return h('div', { class: 'livechat-manifest' },
      h('label', { class: 'livechat-field' }, h('span', {}, 'skill manifest'), this.file),
      this.forget, this.manifestState, this.manifestFindings);
  }

  async pick() {
    const file = this.file.files?.[0];
    if (!file) return;
    if (file.size > MAX_MANIFEST) {
      this.manifestState.textContent = `${file.name} is ${file.size} bytes: at most ${MAX_MANIFEST}`;
      return;
    }
    this.onManifest(await file.text(), file.name);
  }

  /** botemu's `manifest` frame: the declared activities (null: no manifest). */
  setManifest(frame) {
    this.declared = new Map((frame.activities ?? []).map((a) => [a.key, a]));
    this.forget.hidden = frame.activities === null;
    if (frame.activities === null) this.file.value = '';
    this.manifestState.textContent = frame.activities === null ? ''
      : `${frame.name}: ${this.declared.size} declared activities`;
    fill(this.manifestFindings, frame.findings?.length ? findingsView(frame.findings) : null);
    this.fillTypes(this.declared.size ? `${MANIFEST}${this.declared.keys().next().value}` : 'event');
    if (this.declared.size) this.root.open = true;
  }

  fillTypes(chosen = this.type.value) {
    const plain = Object.keys(TYPES).map((t) => h('option', { value: t }, t));
    const declared = [...this.declared.values()].map((a) => h('option', { value: `${MANIFEST}${a.key}` },
      `${a.key} · ${a.type}${a.name ? ` ${a.name}` : ''}`));
    fill(this.type, declared.length ? h('optgroup', { label: 'the manifest declares' }, declared) : null,
      h('optgroup', { label: 'activities' }, plain));
    this.type.value = [...this.type.options].some((o) => o.value === chosen) ? chosen : 'event';
    this.shape();
  }

  shape() {
    const declared = this.declared.get(this.type.value.startsWith(MANIFEST) ? this.type.value.slice(MANIFEST.length) : null);
    const wanted = declared
      ? [...(declared.name ? ['name'] : []), ...(declared.type === 'message' ? ['text'] : []), ...(declared.schema ? [] : ['value'])]
      : TYPES[this.type.value].fields;
    for (const [name, label] of Object.entries(this.labels)) label.hidden = !wanted.includes(name);
    this.inputs.name.readOnly = Boolean(declared);
    if (declared) this.inputs.name.value = declared.name ?? '';
    this.form = declared?.schema ? schemaForm(declared.schema, declared.sample) : null;
    fill(this.formSlot, this.form?.el ?? null);
    this.described.textContent = declared
      ? `${declared.description}${declared.result ? ' The answer is checked against its resultValue.' : ''}` : '';
    this.error.hidden = true;
  }

  /** The JSON of a textarea: undefined when empty; an Error with a message when not JSON. */
  json(name, input) {
    const raw = input.value.trim();
    if (!raw) return undefined;
    const limit = this.limits.value ?? 32768;
    if (raw.length > limit) throw new Error(`${name} is ${raw.length} characters: at most ${limit}`);
    try {
      return JSON.parse(raw);
    } catch (e) {
      throw new Error(`${name} is not JSON: ${e.message}`);
    }
  }

  activity() {
    const key = this.type.value.startsWith(MANIFEST) ? this.type.value.slice(MANIFEST.length) : null;
    const declared = this.declared.get(key);
    if (declared) {
      const value = this.form ? this.form.read() : this.json('the value', this.inputs.value);
      const text = this.inputs.text.value.trim();
      return { type: declared.type, ...(declared.name ? { name: declared.name } : {}),
        ...(declared.type === 'message' && text ? { text } : {}), ...(value === undefined ? {} : { value }) };
    }
    const type = this.type.value;
    const spec = TYPES[type];
    const fields = {
      name: this.inputs.name.value.trim(),
      code: this.inputs.code.value.trim(),
      reaction: this.inputs.reaction.value.trim(),
      value: spec.fields.includes('value') ? this.json('the value', this.inputs.value) : undefined,
      members: spec.fields.includes('members') ? this.json('the members', this.inputs.members) ?? {} : undefined,
    };
    if ((type === 'event' || type === 'invoke') && !fields.name) throw new Error(`an ${type} needs a name`);
    if (type === 'conversationUpdate' && (typeof fields.members !== 'object' || Array.isArray(fields.members))) {
      throw new Error('the members are an object: {"membersAdded": [...], "membersRemoved": [...]}');
    }
    return { type, ...spec.make(fields) };
  }

  submit() {
    try {
      const activity = this.activity();
      this.error.hidden = true;
      this.onSend(activity);
    } catch (e) {
      this.error.textContent = e.message;
      this.error.hidden = false;
    }
  }
}
