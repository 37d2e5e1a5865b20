// A `--require` preload for tests: offsets this process's wall clock (Date, Date.now,
// performance.timeOrigin) by the milliseconds in the file $LATCH_TEST_CLOCK, re-read at most every
// 20 ms, as a host clock set ahead or back would. performance.now() (the monotonic clock) is left
// alone, as a clock change leaves it. tests/support/movedClock.ts sets it up.
'use strict';
const fs = require('node:fs');

const file = process.env.LATCH_TEST_CLOCK;
if (file) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  let cached = 0;
  let checked = -Infinity;
  const offset = () => {
    const mono = performance.now();
    if (mono - checked > 20) {
      checked = mono;
      try {
        cached = Number(fs.readFileSync(file, 'utf8').trim()) || 0;
      } catch {
        cached = 0;
      }
    }
    return cached;
  };
  class MovedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(realNow() + offset());
      else super(...args);
    }
    static now() {
      return realNow() + offset();
    }
  }
  globalThis.Date = MovedDate;
  // A process started while the clock is off sees its start time off too.
  const originAtStart = performance.timeOrigin + offset();
  Object.defineProperty(performance, 'timeOrigin', { get: () => originAtStart, configurable: true });
}
