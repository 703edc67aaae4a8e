import { useId, type ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { EmptyState, Select } from '@/components/ui';
import { cn, focusRing } from '@/lib/cn';
import { useProjectOutlet } from '@/features/projects/pages/ProjectLayout';
import { AgreementSection, CriteriaSection, FacetHeatmap, PairwiseSection } from '../components/RunSections';
import { Loading, LoadError, NoRunsYet, ReportsShell } from '../components/ReportsShell';
import { RunInsights } from '../components/RunInsights';
import { useComparisonSummary, useDashboard, useFacets, useReportRuns, useStatistics } from '../hooks';

function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="space-y-3">
      <h2 id={id} className="text-lg font-semibold text-zinc-900">
        {title}
      </h2>
      {children}
    </section>
  );
}

export function RunReportPage() {
  const { project } = useProjectOutlet();
  const [params, setParams] = useSearchParams();
  const runs = useReportRuns(project.id);
  const runList = runs.data?.items ?? [];
  const chosen = params.get('run');
  const runId = chosen ? Number(chosen) : (runList[0]?.id ?? null);
  const stats = useStatistics(project.id, runs.isPending ? null : runId);
  const scorers = stats.data?.scorers ?? [];
  const versionParam = params.get('scorer_version');
  // Default: the run's headline scorer (pinned, else the composite or one that discriminates:
  // the dashboard's choice), at the newest version the run holds (a run scored again keeps both).
  const headline = useDashboard(project.id, runs.isPending ? null : runId, null);
  const headId = headline.data?.scorer?.id ?? (headline.isPending ? null : scorers[0]?.scorer_id);
  const newest = scorers.filter((s) => s.scorer_id === headId).sort((a, b) => b.version - a.version)[0];
  const versionId = versionParam ? Number(versionParam) : (newest?.scorer_version_id ?? null);
  const facets = useFacets(project.id, stats.data ? runId : null, scorers.length ? versionId : null);
  const pairs = useComparisonSummary(project.id, runs.isPending ? null : runId);
  const set = (name: string, value: string | null) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      if (value === null) next.delete(name);
      else next.set(name, value);
      if (name === 'run') next.delete('scorer_version');
      return next;
    });
  const runSelect = useId();
  const scorerSelect = useId();

  if (runs.isPending)
    return (
      <ReportsShell projectId={project.id} title="Run breakdown" intro="">
        <Loading label="Loading runs" />
      </ReportsShell>
    );
  if (runs.isError)
    return (
      <ReportsShell projectId={project.id} title="Run breakdown" intro="">
        <LoadError what="the runs" error={runs.error} retry={() => runs.refetch()} retrying={runs.isFetching} />
      </ReportsShell>
    );
  if (runList.length === 0 || runId === null)
    return (
      <ReportsShell projectId={project.id} title="Run breakdown" intro="One run's scores broken down by criterion, facet, pairwise comparison and judge agreement.">
        <NoRunsYet projectId={project.id} title="No runs yet" description="Start a run with a scorer; its breakdown by criterion, tag, length and difficulty shows here." />
      </ReportsShell>
    );

  const items = stats.data?.items.filter((i) => i.scorer_version_id === versionId) ?? [];
  const controls = (
    <>
      <div className="flex items-center gap-2">
        <label htmlFor={runSelect} className="text-sm text-zinc-700">
          Run
        </label>
        <Select id={runSelect} controlSize="sm" value={String(runId)} onChange={(e) => set('run', e.target.value)}>
          {!runList.some((r) => r.id === runId) && <option value={runId}>Run #{runId}</option>}
          {runList.map((r) => (
            <option key={r.id} value={r.id}>
              #{r.id} {r.name} ({r.status})
            </option>
          ))}
        </Select>
      </div>
      {scorers.length > 0 && (
        <div className="flex items-center gap-2">
          <label htmlFor={scorerSelect} className="text-sm text-zinc-700">
            Scorer
          </label>
          <Select id={scorerSelect} controlSize="sm" value={String(versionId)} onChange={(e) => set('scorer_version', e.target.value)}>
            {scorers.map((s) => (
              <option key={s.scorer_version_id} value={s.scorer_version_id}>
                {s.name} v{s.version} ({s.kind})
              </option>
            ))}
          </Select>
        </div>
      )}
      <Link to={`/projects/${project.id}/runs/${runId}`} className={cn('rounded text-sm text-indigo-700 underline', focusRing)}>
        Open the run
      </Link>
    </>
  );

  return (
    <ReportsShell
      projectId={project.id}
      title="Run breakdown"
      intro="One run's headline, its targets compared, flaky cases, and its scores broken down by criterion, facet, pairwise comparison and judge agreement, every estimate with its 95% interval."
      controls={controls}
    >
      <div className="pb-8">
        <Section title="Headline">
          <RunInsights projectId={project.id} runId={runId} versionId={versionId} />
        </Section>
      </div>
      {stats.isPending ? (
        <Loading label="Loading the run's statistics" />
      ) : stats.isError ? (
        <LoadError what="the run's statistics" error={stats.error} retry={() => stats.refetch()} retrying={stats.isFetching} />
      ) : scorers.length === 0 ? (
        <EmptyState
          title="This run has no scorer"
          description="Scores come from scorers: add an exact-match check or an LLM judge when you start a run, or score this run's outputs by hand from its page."
        />
      ) : (
        <div className="space-y-8">
          <Section title="Scores and criteria">
            <CriteriaSection items={items} />
          </Section>
          <Section title="Facets">
            {facets.isPending ? (
              <Loading label="Loading facets" />
            ) : facets.isError ? (
              <LoadError what="the facets" error={facets.error} retry={() => facets.refetch()} retrying={facets.isFetching} />
            ) : (
              <FacetHeatmap facets={facets.data} />
            )}
          </Section>
          <Section title="Judge agreement">
            <AgreementSection items={items} />
          </Section>
        </div>
      )}
      <div className="pt-8">
        <Section title="Pairwise comparisons">
          {pairs.isPending ? (
            <Loading label="Loading pairwise comparisons" />
          ) : pairs.isError ? (
            <LoadError what="the pairwise comparisons" error={pairs.error} retry={() => pairs.refetch()} retrying={pairs.isFetching} />
          ) : (
            <PairwiseSection summary={pairs.data} />
          )}
        </Section>
      </div>
    </ReportsShell>
  );
}
