// The phone's microphone: while the person holds "Hold to record", what the browser's microphone
// hears goes to botemu as binary WebSocket frames of 16-bit little-endian mono PCM at 16 kHz
// (emulator/calling/live.py, MIC_RATE), about a quarter of a second each; botemu makes it the
// caller's talk, and a recording holds it in the format the bot asked for. The browser asks for
// the microphone the first time only. Without one, the page says so (Say and Talk still work).

export const RATE = 16000;
const CHUNK = 4096; // samples per frame sent: 256 ms

/** Float samples at `from` Hz as 16-bit samples at RATE (linear interpolation). */
export function toPcm16(samples, from) {
  const step = from / RATE;
  const out = new Int16Array(Math.floor(samples.length / step));
  for (let i = 0; i < out.length; i += 1) {
    const at = i * step, lo = Math.floor(at), hi = Math.min(lo + 1, samples.length - 1);
    const value = samples[lo] + (samples[hi] - samples[lo]) * (at - lo);
    out[i] = Math.max(-32768, Math.min(32767, Math.round(value * 32767)));
  }
  return out;
}

export class Microphone {
  /** send(ArrayBuffer) sends one frame of audio. */
  constructor(send) {
    this.send = send;
    this.context = null;
    this.node = null;
    this.pending = [];
    this.size = 0;
    this.problem = null;
  }

  /** Open the microphone (once); false, with `problem` saying why, when there is none. */
  async open() {
    if (this.node) return true;
    if (this.problem) return false;
    try {
      if (!navigator.mediaDevices?.getUserMedia) throw new Error('this browser gives no microphone here');
      const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1 } });
      this.context = new AudioContext({ sampleRate: RATE });
      await this.context.audioWorklet.addModule(new URL('./phone-mic-worklet.js', import.meta.url));
      const source = this.context.createMediaStreamSource(stream);
      this.node = new AudioWorkletNode(this.context, 'botemu-capture');
      this.node.port.onmessage = (event) => this.heard(event.data);
      source.connect(this.node);
      return true;
    } catch (error) {
      this.problem = error?.message || String(error);
      return false;
    }
  }

  start() {
    this.pending = [];
    this.size = 0;
    this.context?.resume();
    this.node?.port.postMessage('on');
  }

  stop() {
    this.node?.port.postMessage('off');
    this.flush();
  }

  heard(samples) {
    const pcm = toPcm16(samples, this.context.sampleRate);
    this.pending.push(pcm);
    this.size += pcm.length;
    if (this.size >= CHUNK) this.flush();
  }

  flush() {
    if (!this.size) return;
    const frame = new Int16Array(this.size);
    let at = 0;
    for (const part of this.pending) {
      frame.set(part, at);
      at += part.length;
    }
    this.pending = [];
    this.size = 0;
    this.send(frame.buffer); // little-endian on every platform a browser runs on
  }
}
