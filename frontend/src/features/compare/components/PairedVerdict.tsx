import { Badge, type BadgeTone } from '@/components/ui';
import { fixed, pValue, signed, verdictSentence, type Paired } from '../api';

const TESTS: Record<string, string> = {
  mcnemar_exact: 'exact McNemar test',
  wilcoxon_signed_rank: 'Wilcoxon signed-rank test',
};

const TONE: Record<Paired['verdict'], BadgeTone> = {
  'head better': 'success',
  'base better': 'danger',
  'not distinguishable': 'neutral',
};

const LABEL: Record<Paired['verdict'], string> = {
  'head better': 'Head better',
  'base better': 'Base better',
  'not distinguishable': 'Not distinguishable',
};

/** The paired comparison of per-case means: the verdict in words, the difference and its interval, effect size and p. */
export function PairedVerdict({ comparison: c, headName, baseName, binary }: { comparison: Paired; headName: string; baseName: string; binary: boolean }) {
  const what = binary ? 'pass rate' : 'mean score';
  return (
    <section aria-labelledby="verdict-heading" className="space-y-3 rounded-xl border border-zinc-200 bg-white p-4">
      <div className="flex flex-wrap items-center gap-3">
        <h2 id="verdict-heading" className="text-base font-semibold text-zinc-900">
          Paired verdict
        </h2>
        <Badge tone={TONE[c.verdict]} data-testid="verdict">
          {LABEL[c.verdict]}
        </Badge>
      </div>
      <p className="text-base text-zinc-900" data-testid="verdict-sentence">
        {verdictSentence(c, headName, baseName)}
      </p>
      {c.n > 0 && (
        <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-2 lg:grid-cols-4">
          <div>
            <dt className="text-zinc-600">Per-case {what}</dt>
            <dd className="tabular-nums text-zinc-900">
              {fixed(c.mean_base)} → {fixed(c.mean_head)}
            </dd>
          </div>
          <div>
            <dt className="text-zinc-600">Difference (head − base), 95% interval</dt>
            <dd className="tabular-nums text-zinc-900" data-testid="difference">
              {signed(c.mean_difference)} [{signed(c.low)}, {signed(c.high)}]
            </dd>
          </div>
          <div>
            <dt className="text-zinc-600">Effect size (Cohen’s d<sub>z</sub>)</dt>
            <dd className="tabular-nums text-zinc-900" data-testid="effect-size">
              {fixed(c.effect_size, 2)}
            </dd>
          </div>
          <div>
            <dt className="text-zinc-600">p-value{c.test ? ` (${TESTS[c.test] ?? c.test})` : ''}</dt>
            <dd className="tabular-nums text-zinc-900" data-testid="p-value">
              {pValue(c.p_value)}
            </dd>
          </div>
        </dl>
      )}
      {c.n > 0 && (
        <p className="text-sm text-zinc-600">
          Over {c.n} {c.n === 1 ? 'case' : 'cases'} both runs have: head higher on {c.head_higher}, base higher on {c.base_higher}, equal on{' '}
          {c.equal}. “Not distinguishable” means the interval includes no difference: more cases or repeats may tell them apart.
        </p>
      )}
    </section>
  );
}
