// The microphone's audio thread for the phone's "Hold to record" (phone-mic.js): each block of
// samples the browser hears is handed to the page as it comes, while the page says to listen.

class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.on = false;
    this.port.onmessage = (event) => {
      this.on = event.data === 'on';
    };
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (this.on && channel && channel.length) this.port.postMessage(channel.slice(0));
    return true;
  }
}

registerProcessor('botemu-capture', Capture);
