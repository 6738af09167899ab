// The phone's loudspeaker: botemu sends the audio of each prompt as it begins (a binary frame:
// a 4-byte big-endian header length, the header as JSON, then a WAV; emulator/service/phone.py),
// synthesized by eSpeak NG for a text prompt, a file prompt's own audio. The page plays it at
// the call's pace and stops it where the prompt is cut (a barge-in) or the call ends.

/** The header and the WAV of a binary frame, or null when it is not one of ours. */
export function unpack(buffer) {
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength < 4) return null;
  const length = new DataView(buffer).getUint32(0);
  if (length > 4096 || 4 + length > buffer.byteLength) return null;
  try {
    const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
    return header && typeof header === 'object' ? { header, wav: buffer.slice(4 + length) } : null;
  } catch {
    return null;
  }
}

export class Speaker {
  constructor(onPlay) {
    this.onPlay = onPlay; // (header) when a prompt's audio starts
    this.context = null;
    this.playing = null; // {source, key}
    this.enabled = true;
    this.played = 0;
    this.inCall = false;
    this.cutKeys = new Set(); // prompts already cut: audio that comes after is not played
  }

  /** A call begins: its prompts may play. */
  begin() {
    this.inCall = true;
    this.cutKeys.clear();
  }

  /** The call ended: nothing more plays. */
  end() {
    this.inCall = false;
    this.stop();
  }

  /** The prompt `key` was cut (a barge-in): stop it, and never start it later. */
  cut(key) {
    this.cutKeys.add(key);
    this.stop(key);
  }

  /** Call from a click (the browser lets a page make sound after one). */
  wake() {
    if (!this.context) this.context = new AudioContext();
    this.context.resume();
  }

  async play(buffer, pace) {
    const frame = unpack(buffer);
    if (!frame || frame.header.op !== 'audio' || !this.enabled) return;
    this.wake();
    let decoded;
    try {
      decoded = await this.context.decodeAudioData(frame.wav);
    } catch {
      return; // not audio the browser reads: the prompt's text still shows
    }
    const key = `${frame.header.operation_id}#${frame.header.index}`;
    if (!this.inCall || this.cutKeys.has(key)) return; // cut, or the call ended, while decoding
    this.stop();
    const source = this.context.createBufferSource();
    source.buffer = decoded;
    source.playbackRate.value = 1 / pace;
    source.connect(this.context.destination);
    source.start(this.context.currentTime + Math.max(0, Number(frame.header.delay) || 0) * pace); // after its leading silence
    this.playing = { source, key };
    source.addEventListener('ended', () => {
      if (this.playing?.source === source) this.playing = null;
    });
    this.played += 1;
    this.onPlay(frame.header);
  }

  /** Stop the prompt playing (all of them when `key` is absent, else only that one). */
  stop(key) {
    if (!this.playing || (key && this.playing.key !== key)) return;
    try {
      this.playing.source.stop();
    } catch {
      // already ended
    }
    this.playing = null;
  }
}
