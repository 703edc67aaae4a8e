// Thin wrappers over recharts shared by the report pages: bars with interval whiskers and
// lines over runs, in the accessible palette (format.ts), every series also told apart by
// its marker and dash pattern.
import { useId } from 'react';
import { Bar, BarChart, CartesianGrid, ErrorBar, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import { DASHES, MARKERS, SERIES } from '../format';

const AXIS = { fontSize: 12, fill: '#3f3f46' };

export interface BarDatum {
  name: string;
  value: number | null;
  err?: [number, number];
}

/** One bar per item, with its interval drawn as an error bar where there is one. */
export function IntervalBars({ data, width, height, unit, domain, valueLabel }: { data: BarDatum[]; width: number; height: number; unit?: string; domain?: [number | 'auto', number | 'auto']; valueLabel: string }) {
  return (
    <BarChart width={width} height={height} data={data} margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
      <CartesianGrid stroke="#e4e4e7" vertical={false} />
      <XAxis dataKey="name" tick={AXIS} interval={0} />
      <YAxis tick={AXIS} domain={domain ?? [0, 'auto']} unit={unit} />
      <Tooltip />
      <Bar dataKey="value" name={valueLabel} fill={SERIES[0]} isAnimationActive={false}>
        <ErrorBar dataKey="err" width={6} strokeWidth={2} stroke="#18181b" direction="y" isAnimationActive={false} />
      </Bar>
    </BarChart>
  );
}

export interface StackSeries {
  key: string;
  label: string;
}

/**
 * Fills of the bar series: the colour, and for every series past the first a texture
 * (stripes, dots, cross-hatch) so series differ by more than colour, in the legend too.
 */
function Textures({ prefix, count }: { prefix: string; count: number }) {
  return (
    <defs>
      {Array.from({ length: count }, (_, i) => {
        const colour = SERIES[i % SERIES.length];
        const kind = i % 4;
        return (
          <pattern key={i} id={`${prefix}-${i}`} width="8" height="8" patternUnits="userSpaceOnUse">
            <rect width="8" height="8" fill={colour} />
            {kind === 1 && <path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" stroke="#ffffff" strokeWidth="1.5" />}
            {kind === 2 && <circle cx="4" cy="4" r="1.6" fill="#ffffff" />}
            {kind === 3 && <path d="M0,4 h8 M4,0 v8" stroke="#ffffff" strokeWidth="1.2" />}
          </pattern>
        );
      })}
    </defs>
  );
}

/** Stacked or grouped bars: one bar group per row, one series per key. */
export function SeriesBars({
  data,
  series,
  width,
  height,
  stacked = false,
  xKey = 'name',
  withErrors = false,
}: {
  data: Record<string, unknown>[];
  series: StackSeries[];
  width: number;
  height: number;
  stacked?: boolean;
  xKey?: string;
  withErrors?: boolean;
}) {
  const prefix = `texture${useId().replace(/:/g, '')}`;
  return (
    <BarChart width={width} height={height} data={data} margin={{ top: 8, right: 16, bottom: 8, left: 16 }}>
      <Textures prefix={prefix} count={series.length} />
      <CartesianGrid stroke="#e4e4e7" vertical={false} />
      <XAxis dataKey={xKey} tick={AXIS} />
      <YAxis tick={AXIS} />
      <Tooltip />
      <Legend />
      {series.map((s, i) => (
        <Bar
          key={s.key}
          dataKey={s.key}
          name={s.label}
          stackId={stacked ? 'all' : undefined}
          fill={`url(#${prefix}-${i})`}
          stroke="#ffffff"
          strokeWidth={1}
          isAnimationActive={false}
        >
          {withErrors && <ErrorBar dataKey={`${s.key}_err`} width={5} strokeWidth={2} stroke="#18181b" direction="y" isAnimationActive={false} />}
        </Bar>
      ))}
    </BarChart>
  );
}

/** Lines over an ordered x axis, each with interval whiskers from `<key>_err`. */
export function IntervalLines({ data, series, width, height, xKey = 'name', withErrors = true }: { data: Record<string, unknown>[]; series: StackSeries[]; width: number; height: number; xKey?: string; withErrors?: boolean }) {
  return (
    <LineChart width={width} height={height} data={data} margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
      <CartesianGrid stroke="#e4e4e7" />
      <XAxis dataKey={xKey} tick={AXIS} />
      <YAxis tick={AXIS} domain={[0, 'auto']} />
      <Tooltip />
      <Legend />
      {series.map((s, i) => (
        <Line
          key={s.key}
          dataKey={s.key}
          name={s.label}
          stroke={SERIES[i % SERIES.length]}
          strokeWidth={2}
          strokeDasharray={DASHES[i % DASHES.length]}
          dot={{ r: 4, fill: SERIES[i % SERIES.length] }}
          legendType={MARKERS[i % MARKERS.length]}
          connectNulls
          isAnimationActive={false}
        >
          {withErrors && <ErrorBar dataKey={`${s.key}_err`} width={5} stroke={SERIES[i % SERIES.length]} direction="y" isAnimationActive={false} />}
        </Line>
      ))}
    </LineChart>
  );
}
