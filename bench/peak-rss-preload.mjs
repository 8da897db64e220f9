// Loaded with `node --import` into every process the benchmark measures: at exit it writes the
// process's peak resident set (getrusage maxRSS, exact, unlike sampling) and its CPU time to
// BENCH_PEAK_RSS_FILE.<pid> as JSON.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_PEAK_RSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      const usage = process.resourceUsage();
      const report = {
        maxRssBytes: usage.maxRSS * 1024,
        cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      };
      writeFileSync(`${file}.${process.pid}`, JSON.stringify(report));
    } catch {
      // The measurement is best effort; the /proc sampler still has a figure.
    }
  });
}
