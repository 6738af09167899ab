// The call's track on its page: a player for the whole call as botemu hears it (the route
// /_logview/api/calls/{id}/audio: prompts on the left, the caller on the right), in step with the
// ladder. While it plays, the row of the moment is highlighted; a click on a row's time seeks the
// track there. The waveform strip is drawn once the track is first played (fetched once more and
// decoded by the browser; nothing leaves the page).

import { h } from './dom.js';
import { urls } from './api.js';

const WAVE_HEIGHT = 48;

export class TrackPlayer {
  constructor(box, timeline) {
    this.timeline = timeline;
    this.audio = h('audio', { id: 'track-audio', controls: true, preload: 'none', 'aria-label': 'The call as heard' });
    this.wave = h('canvas', { id: 'track-wave', class: 'track-wave', height: WAVE_HEIGHT, width: 800, 'aria-hidden': 'true' });
    this.root = h('div', { id: 'track', class: 'track', hidden: true },
      h('span', { class: 'muted' }, 'Hear the call: '), this.audio, this.wave);
    box.prepend(this.root);
    this.drawn = false;
    this.audio.addEventListener('timeupdate', () => this.follow());
    this.audio.addEventListener('play', () => this.draw());
    timeline.addEventListener('click', (event) => {
      const time = event.target.closest?.('.vtime');
      const row = time?.closest('[data-vtime]');
      if (!row || this.root.hidden) return;
      this.audio.currentTime = Number(row.dataset.vtime);
      this.follow();
    });
  }

  /** Show the player for a call that has ended (a conversation has no track). */
  update(call) {
    const playable = call.kind === 'call' && call.end_reason !== null;
    this.root.hidden = !playable;
    const src = playable ? urls.audio(call.id) : '';
    if (playable && this.audio.getAttribute('src') !== src) {
      this.audio.setAttribute('src', src);
      this.drawn = false;
    }
  }

  pause() {
    this.audio.pause();
  }

  follow() {
    const now = this.audio.currentTime;
    let current = null;
    for (const row of this.timeline.querySelectorAll('[data-vtime]')) {
      if (Number(row.dataset.vtime) <= now + 1e-6) current = row;
      row.classList.remove('now-playing');
      row.removeAttribute('aria-current');
    }
    if (current) {
      current.classList.add('now-playing');
      current.setAttribute('aria-current', 'time');
    }
  }

  async draw() {
    if (this.drawn) return;
    this.drawn = true;
    try {
      const data = await (await fetch(this.audio.getAttribute('src'))).arrayBuffer();
      const decoded = await new AudioContext().decodeAudioData(data);
      const ctx = this.wave.getContext('2d');
      const { width, height } = this.wave;
      ctx.clearRect(0, 0, width, height);
      decoded.numberOfChannels > 0 && [0, 1].slice(0, decoded.numberOfChannels).forEach((channel) => {
        const samples = decoded.getChannelData(channel);
        const step = Math.max(1, Math.floor(samples.length / width));
        ctx.fillStyle = channel === 0 ? '#1f5fa8' : '#7048a8';
        for (let x = 0; x < width; x += 1) {
          let peak = 0;
          for (let i = x * step; i < (x + 1) * step && i < samples.length; i += 1) peak = Math.max(peak, Math.abs(samples[i]));
          const bar = peak * (height / 2);
          ctx.fillRect(x, channel === 0 ? height / 2 - bar : height / 2, 1, bar);
        }
      });
      this.wave.dataset.drawn = 'true';
    } catch {
      this.drawn = false; // the next play tries again
    }
  }
}
