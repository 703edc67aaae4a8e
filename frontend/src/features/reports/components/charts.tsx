// Thin wrappers over recharts shared by the report pages: bars with interval whiskers and
// lines over runs, in the accessible palette (format.ts), every series also told apart by
// its marker and dash pattern.
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
        <ErrorBar dataKey="err" width={6} strokeWidth={2} stroke="#18181b" direction="y" />
      </Bar>
    </BarChart>
  );
}

export interface StackSeries {
  key: string;
  label: string;
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
  return (
    <BarChart width={width} height={height} data={data} margin={{ top: 8, right: 16, bottom: 8, left: 16 }}>
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
          fill={SERIES[i % SERIES.length]}
          stroke="#ffffff"
          strokeWidth={1}
          isAnimationActive={false}
        >
          {withErrors && <ErrorBar dataKey={`${s.key}_err`} width={5} strokeWidth={2} stroke="#18181b" direction="y" />}
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
          {withErrors && <ErrorBar dataKey={`${s.key}_err`} width={5} stroke={SERIES[i % SERIES.length]} direction="y" />}
        </Line>
      ))}
    </LineChart>
  );
}
