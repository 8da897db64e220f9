/** The status page's chart: records per second for each minute of the last hour, as inline SVG. */
import { escapeHtml, formatClock, formatCount, formatRate } from './html.js';

/** One minute of the chart. */
export interface MinuteRate {
  /** The minute's start, ms since the epoch. */
  startMs: number;
  records: number;
  /** Records per second over the minute (the current minute: over the seconds elapsed so far). */
  perSecond: number;
}

/**
 * The last `minutes` minutes up to `nowMs`, oldest first, the current (partial) minute last:
 * minutes without a record count zero. The current minute's rate is over the seconds elapsed in
 * it (at least one), so a sync that just ran shows at its real speed rather than diluted.
 */
export function minuteSeries(
  counts: ReadonlyArray<{ minuteMs: number; records: number }>,
  nowMs: number,
  minutes = 60,
): MinuteRate[] {
  const current = Math.floor(nowMs / 60_000) * 60_000;
  const byMinute = new Map(counts.map((c) => [c.minuteMs, c.records]));
  const series: MinuteRate[] = [];
  for (let i = minutes - 1; i >= 0; i--) {
    const startMs = current - i * 60_000;
    const records = byMinute.get(startMs) ?? 0;
    const seconds = i === 0 ? Math.max((nowMs - startMs) / 1000, 1) : 60;
    series.push({ startMs, records, perSecond: records / seconds });
  }
  return series;
}

const WIDTH = 720;
const HEIGHT = 200;
const PLOT = { left: 44, right: 8, top: 10, bottom: 24 };

/** A round ceiling for the y axis: 1, 2 or 5 times a power of ten, at least 1. */
export function axisMax(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((m) => m * power >= value) ?? 10;
  return step * power;
}

/**
 * The chart as an `<svg>`: an area and a line through one point per minute (`path.series`, its
 * `data-points` the number of points), the y axis in records per second, the x axis in UTC.
 */
export function throughputSvg(series: readonly MinuteRate[]): string {
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const max = axisMax(Math.max(0, ...series.map((m) => m.perSecond)));
  const bottom = PLOT.top + plotHeight;
  const step = series.length > 1 ? plotWidth / (series.length - 1) : 0;
  const points = series.map((m, i) => {
    const x = PLOT.left + i * step;
    const y = bottom - (m.perSecond / max) * plotHeight;
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  const line = points.length > 0 ? `M${points.join(' L')}` : '';
  const area =
    points.length > 0
      ? `${line} L${(PLOT.left + (series.length - 1) * step).toFixed(1)},${bottom} L${PLOT.left},${bottom} Z`
      : '';
  const total = series.reduce((sum, m) => sum + m.records, 0);
  const grid = [0, 0.5, 1].map((f) => {
    const y = (bottom - f * plotHeight).toFixed(1);
    return `<line class="grid" x1="${PLOT.left}" y1="${y}" x2="${WIDTH - PLOT.right}" y2="${y}"/><text class="axis" x="${PLOT.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle">${formatRate(max * f)}</text>`;
  });
  const ticks = tickIndexes(series.length).map((i) => {
    const m = series[i] as MinuteRate;
    const x = (PLOT.left + i * step).toFixed(1);
    // The last label ends at the plot's edge rather than past it.
    const anchor = i === series.length - 1 ? 'end' : 'middle';
    return `<text class="axis" x="${x}" y="${HEIGHT - 6}" text-anchor="${anchor}">${formatClock(new Date(m.startMs))}</text>`;
  });
  const title = `${formatCount(total)} records stored in the last ${series.length} minutes`;
  return `<svg id="throughput" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">
<title>${escapeHtml(title)}</title>
${grid.join('\n')}
${ticks.join('\n')}
<path class="area" d="${area}"/>
<path class="series" data-points="${series.length}" data-total="${total}" d="${line}"/>
</svg>`;
}

/** Every 15th minute from the oldest, and the current one. */
function tickIndexes(length: number): number[] {
  const ticks: number[] = [];
  for (let i = 0; i < length - 5; i += 15) ticks.push(i);
  if (length > 0) ticks.push(length - 1);
  return ticks;
}
