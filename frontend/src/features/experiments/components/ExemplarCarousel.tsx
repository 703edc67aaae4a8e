import { useState } from 'react';
import { Button } from '@/components/ui';
import type { Exemplar } from '../api';

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** The failing exemplars the refiner saw (up to 10), one at a time with their scores. */
export function ExemplarCarousel({ items }: { items: Exemplar[] }) {
  const [i, setI] = useState(0);
  if (items.length === 0) return <p className="text-sm text-zinc-600">The refiner saw no failing exemplars.</p>;
  const at = Math.min(i, items.length - 1);
  const x = items[at];
  return (
    <section aria-roledescription="carousel" aria-label="Failing exemplars" className="space-y-2 rounded-xl border border-zinc-200 bg-white p-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold" aria-live="polite" data-testid="exemplar-position">
          Example {at + 1} of {items.length}
        </h3>
        <div className="flex gap-2">
          <Button size="sm" variant="secondary" disabled={at === 0} onClick={() => setI(at - 1)} aria-label="Previous example">
            ←
          </Button>
          <Button size="sm" variant="secondary" disabled={at === items.length - 1} onClick={() => setI(at + 1)} aria-label="Next example">
            →
          </Button>
        </div>
      </div>
      <div aria-roledescription="slide" className="space-y-2 text-sm">
        <div>
          <p className="font-medium text-zinc-700">Input</p>
          <pre className="whitespace-pre-wrap break-words rounded-xl bg-zinc-50 p-2">{show(x.input)}</pre>
        </div>
        <div>
          <p className="font-medium text-zinc-700">Current output{x.model ? ` (${x.model})` : ''}</p>
          <pre className="whitespace-pre-wrap break-words rounded-xl bg-zinc-50 p-2">{x.output}</pre>
        </div>
        <div>
          <p className="font-medium text-zinc-700">Scores{typeof x.composite === 'number' ? ` (composite ${x.composite.toFixed(2)})` : ''}</p>
          <ul className="flex flex-wrap gap-2">
            {Object.entries(x.scores ?? {}).map(([k, v]) => (
              <li key={k} className="rounded-xl border border-zinc-200 px-2 py-0.5">
                {k}: {v ?? '—'}
              </li>
            ))}
          </ul>
        </div>
        {x.rationales && Object.keys(x.rationales).length > 0 && (
          <details>
            <summary className="cursor-pointer font-medium text-zinc-700">Judge rationales</summary>
            <ul className="mt-1 space-y-1">
              {Object.entries(x.rationales).map(([k, v]) => (
                <li key={k} className="break-words">
                  <span className="font-medium">{k}:</span> {v}
                </li>
              ))}
            </ul>
          </details>
        )}
      </div>
    </section>
  );
}
