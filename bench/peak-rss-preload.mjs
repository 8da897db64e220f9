// Loaded with `node --import` into every process the benchmark measures: at exit it writes the
// process's peak resident set (getrusage maxRSS, exact, unlike sampling) to BENCH_PEAK_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_PEAK_RSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      writeFileSync(`${file}.${process.pid}`, String(process.resourceUsage().maxRSS * 1024));
    } catch {
      // The measurement is best effort; the /proc sampler still has a figure.
    }
  });
}
