// "Save as scenario" on a call's or a conversation's page: the scenario that replays it, made by
// GET /_logview/api/calls/{id}/scenario (emulator/logview/replays.py), shown before it is saved.
// The YAML holds the bot's own texts: it only ever goes into the page as text (textContent).

import { getJSON, urls } from './api.js';
import { $, fill, h } from './dom.js';

const COPIED_MS = 1500;

export class ScenarioPanel {
  constructor(root) {
    this.button = $('#save-scenario', root);
    this.panel = $('#scenario-panel', root);
    this.strict = $('#scenario-strict', root);
    this.loose = $('#scenario-loose', root);
    this.copyButton = $('#scenario-copy', root);
    this.download = $('#scenario-download', root);
    this.status = $('#scenario-status', root);
    this.notes = $('#scenario-notes', root);
    this.yaml = $('#scenario-yaml', root);
    this.call = null;
    this.text = '';
    this.request = 0;
    this.button.addEventListener('click', () => (this.panel.hidden ? this.show() : this.hide()));
    $('#scenario-close', root).addEventListener('click', () => this.hide());
    for (const radio of [this.strict, this.loose]) {
      radio.addEventListener('change', () => this.load());
    }
    this.copyButton.addEventListener('click', () => this.copy());
  }

  /** A new page: nothing shown, loose again. */
  reset() {
    this.call = null;
    this.request += 1;
    this.button.hidden = true;
    this.loose.checked = true;
    this.hide();
  }

  /** The call shown (again): the button, usable once the call has ended. */
  update(call) {
    this.call = call;
    const running = call.kind === 'call' && !call.end_reason;
    this.button.hidden = false;
    this.button.disabled = running;
    this.button.title = running
      ? 'a call can be made a scenario once it has ended'
      : `the scenario that replays this ${call.kind}: see it, copy it or download it`;
  }

  show() {
    if (!this.call) return;
    this.panel.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    this.load();
  }

  hide() {
    this.request += 1;
    this.panel.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
  }

  async load() {
    const call = this.call;
    if (!call || this.panel.hidden) return;
    const strict = this.strict.checked;
    const number = ++this.request;
    this.copyButton.disabled = true;
    this.download.hidden = true;
    this.panel.dataset.state = 'loading';
    this.status.className = 'scenario-status muted';
    this.status.textContent = 'making the scenario…';
    let replay;
    try {
      replay = await getJSON(urls.scenario(call.id, { strict, format: 'json' }));
    } catch (error) {
      if (number !== this.request) return;
      this.failed(`Cannot make a scenario of ${call.id}: ${error.message}`);
      return;
    }
    if (number !== this.request) return;
    this.shown(call, replay, strict);
  }

  shown(call, replay, strict) {
    this.text = replay.text;
    this.yaml.textContent = replay.text;
    this.yaml.dataset.mode = strict ? 'strict' : 'loose';
    this.yaml.hidden = false;
    this.download.href = urls.scenario(call.id, { strict, download: true });
    this.download.setAttribute('download', replay.filename);
    this.download.title = `save as ${replay.filename}`;
    this.download.hidden = false;
    this.copyButton.disabled = false;
    const mode = strict ? 'strict: every text as it was' : 'loose: numbers, dates, times and ids as patterns';
    const checked = replay.kind === 'conversation' ? 'the user\'s turns and the bot\'s replies'
      : replay.verified ? 'the caller\'s steps were checked against the call\'s Workflows'
        : 'the caller\'s steps could not be confirmed: see the notes';
    this.status.className = `scenario-status ${replay.verified ? 'muted' : 'warning'}`;
    this.status.textContent = `${replay.filename} · ${mode} · ${checked}`;
    fill(this.notes, replay.notes.map((note) => h('li', { class: 'scenario-note' }, note)));
    this.notes.hidden = replay.notes.length === 0;
    this.panel.dataset.state = 'ready';
    this.panel.dataset.verified = String(replay.verified);
  }

  failed(message) {
    this.text = '';
    this.yaml.textContent = '';
    this.yaml.hidden = true;
    fill(this.notes);
    this.notes.hidden = true;
    this.status.className = 'scenario-status problem';
    this.status.textContent = message;
    this.panel.dataset.state = 'error';
  }

  async copy() {
    if (!this.text) return;
    try {
      await navigator.clipboard.writeText(this.text);
      this.copyButton.textContent = 'Copied';
    } catch {
      // No clipboard (a page not on loopback or https): select the text for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(this.yaml);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      this.copyButton.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => {
      this.copyButton.textContent = 'Copy';
    }, COPIED_MS);
  }
}
