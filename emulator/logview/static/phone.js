// The live phone (#/phone): call a calling bot and be its caller, in real time. The page opens one
// socket (livechat-socket.js, to botemu's /_botemu/live/phone) and places the call there; botemu
// runs it with the platform code every call uses (emulator/service/phone.py) and tells the page
// each event as it is recorded, and each prompt as it begins. The person acts with the dial pad
// (or the keyboard: 0-9, *, #), Say, Talk, Hold to record (the microphone; phone-mic.js) and Hang
// up; the prompts' audio plays as they begin (phone-audio.js), and the action's timers count down
// as the engine sets them. The call is in the store as any other: its page (linked) has the whole
// ladder, growing live.

import { h, fill } from './dom.js';
import { LiveSocket } from './livechat-socket.js';
import { Microphone } from './phone-mic.js';
import { Speaker } from './phone-audio.js';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'];
const RECENT = 'botemu.phone.recent';
const MAX_RECENT = 5;
const MAX_LINES = 300; // ladder lines kept on the page; the call's page has them all
const TIMERS = {
  initialSilenceTimeout: 'initial silence',
  interdigitTimeout: 'between digits',
  completedSilenceDetected: 'silence',
  maxRecordingTimeout: 'maximum duration',
};

/** The bootstrap values for the phone ({token, path}), or null without a running botemu. */
export function phoneBootstrap(doc = document) {
  const token = doc.querySelector('meta[name="botemu-live-token"]')?.getAttribute('content');
  const path = doc.querySelector('meta[name="botemu-live-phone"]')?.getAttribute('content');
  if (!token || !path || !path.startsWith('/') || !/^[A-Za-z0-9_-]+$/.test(token)) return null;
  return { token, path };
}

function recent() {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT) || '[]');
    return Array.isArray(list) ? list.filter((u) => typeof u === 'string').slice(0, MAX_RECENT) : [];
  } catch {
    return [];
  }
}

function remember(url) {
  const list = [url, ...recent().filter((u) => u !== url)].slice(0, MAX_RECENT);
  try {
    localStorage.setItem(RECENT, JSON.stringify(list));
  } catch {
    // private mode: nothing remembered
  }
}

export class PhonePage {
  constructor(root) {
    this.root = root;
    this.boot = phoneBootstrap();
    this.socket = null;
    this.callId = null;
    this.timer = null;
    this.pace = 1; // real seconds per virtual second
    this.built = false;
    this.keys = (event) => this.key(event);
    this.speaker = new Speaker((header) => {
      this.sound.textContent = `Playing ${header.seconds.toFixed(1)} s of audio (${header.source})`;
      this.sound.dataset.played = String(this.speaker.played);
    });
    this.mic = new Microphone((buffer) => this.socket?.sendBytes(buffer));
    this.holding = false;
  }

  open() {
    if (!this.built) this.build();
    if (this.boot && !this.socket?.isOpen) this.connect();
    document.addEventListener('keydown', this.keys);
  }

  close() {
    document.removeEventListener('keydown', this.keys); // the call goes on meanwhile
  }

  build() {
    this.built = true;
    if (!this.boot) {
      fill(this.root, h('p', { class: 'problem', role: 'status', id: 'phone-unavailable' },
        'The phone calls bots through a running botemu. This log view has none (botemu logview ',
        'only reads a database): open the log view of botemu serve or botemu demo.'));
      return;
    }
    this.bots = h('select', { id: 'phone-bot', 'aria-label': 'Bot' });
    this.url = h('input', { id: 'phone-url', type: 'url', 'aria-label': 'Bot URL', list: 'phone-recent',
      placeholder: 'or a calling URL: http://127.0.0.1:8080/api/calls', size: 40 });
    this.recentList = h('datalist', { id: 'phone-recent' });
    this.callButton = h('button', { id: 'phone-call', type: 'button', onclick: () => this.call() }, 'Call');
    this.identity = h('input', { id: 'phone-identity', type: 'text', 'aria-label': 'Caller identity',
      placeholder: '8:alice (made up when empty)', maxlength: 272, size: 22 });
    this.displayName = h('input', { id: 'phone-display-name', type: 'text', 'aria-label': 'Display name',
      placeholder: 'Alice Example', maxlength: 256, size: 18 });
    this.multiparty = h('input', { id: 'phone-multiparty', type: 'checkbox' });
    const caller = h('details', { class: 'phone-caller' }, h('summary', {}, 'Caller'),
      this.identity, this.displayName,
      h('label', {}, this.multiparty, ' multiparty'));
    this.status = h('p', { id: 'phone-status', class: 'muted', role: 'status' }, 'Connecting…');
    this.playing = h('p', { id: 'phone-playing', class: 'phone-playing', 'aria-live': 'polite' }, '');
    this.timerView = h('p', { id: 'phone-timer', class: 'phone-timer muted', role: 'timer' }, '');
    this.sound = h('p', { id: 'phone-sound', class: 'phone-sound muted' }, '');
    this.soundOn = h('input', { id: 'phone-sound-on', type: 'checkbox', checked: true,
      onchange: () => { this.speaker.enabled = this.soundOn.checked; if (!this.soundOn.checked) this.speaker.stop(); } });
    this.micState = h('p', { id: 'phone-mic', class: 'muted' }, '');
    this.holdButton = h('button', { type: 'button', id: 'phone-hold', 'aria-pressed': 'false' }, 'Hold to record');
    this.pad = h('div', { class: 'phone-pad', role: 'group', 'aria-label': 'Dial pad' },
      KEYS.map((key) => h('button', { type: 'button', class: 'phone-key', 'aria-label': key,
        dataset: { key }, onclick: () => this.act({ op: 'press', keys: key }) }, key)));
    this.words = h('input', { id: 'phone-words', type: 'text', 'aria-label': 'Words to say',
      maxlength: 500, placeholder: 'words to say' });
    const controls = h('div', { class: 'phone-actions' },
      this.words,
      h('button', { type: 'button', id: 'phone-say', onclick: () => this.say() }, 'Say'),
      h('button', { type: 'button', id: 'phone-talk', onclick: () => this.act({ op: 'talk', seconds: 2 }) }, 'Talk'),
      this.holdButton,
      h('button', { type: 'button', id: 'phone-hangup', class: 'danger', onclick: () => this.act({ op: 'hangup' }) }, 'Hang up'),
      h('label', { class: 'phone-sound-on' }, this.soundOn, ' play the prompts'));
    this.ladder = h('ol', { id: 'phone-ladder', class: 'phone-ladder', 'aria-label': 'What went over the wire' });
    this.link = h('p', { id: 'phone-link', class: 'muted' }, '');
    fill(this.root,
      h('div', { class: 'phone-top' }, h('h1', {}, 'Phone'), this.bots, this.url, this.recentList, this.callButton, caller),
      this.status,
      h('div', { class: 'phone-body' },
        h('div', { class: 'phone-device' }, this.playing, this.timerView, this.sound, this.pad, controls, this.micState),
        h('div', { class: 'phone-side' }, this.link, this.ladder)));
    this.words.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') this.say();
    });
    // Hold to record: pressed with the pointer, or with Space or Enter from the keyboard.
    const hold = this.holdButton;
    hold.addEventListener('pointerdown', (event) => { event.preventDefault(); this.hold(); });
    for (const name of ['pointerup', 'pointerleave', 'pointercancel']) hold.addEventListener(name, () => this.release());
    hold.addEventListener('keydown', (event) => {
      if ((event.key === ' ' || event.key === 'Enter') && !event.repeat) { event.preventDefault(); this.hold(); }
    });
    hold.addEventListener('keyup', (event) => {
      if (event.key === ' ' || event.key === 'Enter') { event.preventDefault(); this.release(); }
    });
    hold.addEventListener('click', (event) => event.preventDefault());
    this.showRecent();
  }

  connect() {
    this.socket = new LiveSocket(this.boot, {
      onFrame: (frame) => this.frame(frame),
      onBinary: (buffer) => this.speaker.play(buffer, this.pace),
      onState: (state, detail) => {
        if (state === 'open') this.status.textContent = this.callId ? 'Connected again.' : 'Ready: choose a bot and Call.';
        if (state === 'open' && this.callId) {
          this.speaker.begin();
          this.socket.send({ op: 'resume', call_id: this.callId });
        }
        if (state === 'closed') this.status.textContent = `Disconnected (${detail}).`;
      },
    });
    this.socket.connect();
  }

  showRecent() {
    fill(this.recentList, recent().map((u) => h('option', { value: u })));
  }

  call() {
    const url = this.url.value.trim() || this.bots.value;
    if (!url) {
      this.status.textContent = 'Choose a bot, or type its calling URL.';
      return;
    }
    if (this.url.value.trim()) remember(url);
    this.showRecent();
    fill(this.ladder);
    this.callId = null;
    // #/phone?pace=0.2 runs the call five times faster than real time (for tests and demos).
    this.pace = Number(new URLSearchParams(location.hash.split('?')[1] || '').get('pace')) || 1;
    const caller = { identity: this.identity.value.trim(), display_name: this.displayName.value.trim(),
      multiparty: this.multiparty.checked };
    this.speaker.wake(); // a click: the browser lets the page play the prompts from now on
    this.speaker.begin();
    this.socket?.send({ op: 'call', bot: url, pace: this.pace, caller });
    this.status.textContent = `Calling ${url}…`;
  }

  async hold() {
    if (this.holding || !this.callId) return;
    this.holding = true;
    this.holdButton.setAttribute('aria-pressed', 'true');
    if (!(await this.mic.open())) {
      this.micState.textContent = `No microphone (${this.mic.problem}): Say puts the typed words in a recording, Talk puts sound.`;
      this.holding = false;
      this.holdButton.setAttribute('aria-pressed', 'false');
      return;
    }
    if (!this.holding) return; // let go while the browser was asking
    this.mic.start();
    this.act({ op: 'hold' });
    this.micState.textContent = 'Recording from the microphone: let go to stop.';
  }

  /** Let go of the button; `tell` false when botemu already knows (it let go, or the call ended). */
  release(tell = true) {
    if (!this.holding) return;
    this.holding = false;
    this.holdButton.setAttribute('aria-pressed', 'false');
    this.mic.stop();
    if (tell) this.act({ op: 'release' });
    this.micState.textContent = '';
  }

  say() {
    const text = this.words.value.trim();
    if (!text) return;
    this.act({ op: 'say', text });
    this.words.value = '';
  }

  act(frame) {
    if (!this.socket?.isOpen) return;
    this.socket.send(frame); // what it did comes back as the call's events
  }

  key(event) {
    if (event.target instanceof HTMLInputElement || event.ctrlKey || event.metaKey || event.altKey) return;
    if (KEYS.includes(event.key) && this.callId) {
      event.preventDefault();
      this.act({ op: 'press', keys: event.key });
    }
  }

  frame(frame) {
    if (frame.op === 'ready') {
      fill(this.bots, h('option', { value: '' }, frame.bots.length ? 'a registered bot…' : 'no registered calling bot'),
        frame.bots.map((b) => h('option', { value: b.url }, `${b.name} (${b.url})`)));
      if (frame.bots.length === 1) this.bots.value = frame.bots[0].url;
    } else if (frame.op === 'started') {
      this.speaker.begin();
      this.callId = frame.call_id;
      this.status.textContent = `In a call with ${frame.bot}.`;
      fill(this.link, 'The whole ladder: ', h('a', { href: `#/calls/${encodeURIComponent(frame.call_id)}`, id: 'phone-call-page' }, `call ${frame.call_id.slice(0, 12)}`));
    } else if (frame.op === 'event') {
      this.event(frame);
    } else if (frame.op === 'ended') {
      this.status.textContent = `Call ended: ${frame.reason}.`;
      this.playing.textContent = '';
      this.stopTimer();
      this.speaker.end();
      this.release(false);
      this.callId = null;
    } else if (frame.op === 'released') {
      this.release(false);
      this.micState.textContent = `botemu let go of the microphone: ${frame.reason}.`;
    } else if (frame.op === 'refused') {
      this.status.textContent = `Refused: ${frame.error}`;
    }
  }

  event(frame) {
    const p = frame.payload || {};
    if (frame.kind === 'live.playing') {
      const heard = p.recognized_text ? `: “${p.recognized_text}” (recognised)` : '';
      this.playing.textContent = p.text || (p.file_uri ? `(file ${p.file_uri})${heard}` : '(silence)');
      this.sound.textContent = '';
      this.stopTimer();
      return;
    }
    if (frame.kind === 'live.timer') {
      this.countDown(p, frame.vtime);
      return;
    }
    if (frame.kind === 'platform' && p.kind === 'action') this.stopTimer();
    if (frame.kind === 'platform' && p.kind === 'prompt played' && p.interrupted) {
      this.speaker.cut(`${p.operation_id}#${p.index}`);
      this.playing.textContent = `${this.playing.textContent} (cut off)`;
    }
    this.line(`${frame.vtime.toFixed(2)} s  ${p.summary || frame.kind}`, frame.kind);
  }

  /** Count the action's timer down, as the engine set it at `vtime` (a live.timer event). */
  countDown(timer, vtime) {
    this.stopTimer();
    const started = performance.now();
    const label = TIMERS[timer.reason] || timer.reason;
    const show = () => {
      const now = vtime + (performance.now() - started) / 1000 / this.pace;
      const left = Number(timer.deadline) - now;
      const limit = timer.limit == null ? '' : ` · recording ends in ${Math.max(0, Number(timer.limit) - now).toFixed(1)} s at most`;
      this.timerView.textContent = left > 0 ? `${label}: ${left.toFixed(1)} s${limit}` : '';
    };
    show();
    this.timer = setInterval(show, 100);
  }

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.timerView) this.timerView.textContent = '';
  }

  line(text, kind) {
    this.ladder.append(h('li', { class: 'phone-line', dataset: { kind } }, text));
    while (this.ladder.children.length > MAX_LINES) this.ladder.firstChild.remove();
    this.ladder.lastChild.scrollIntoView({ block: 'nearest' });
  }
}
