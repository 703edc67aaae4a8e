import { json, mockFetch } from '@/test/utils';
import { project } from '@/test/providerFixtures';
import { run as makeRun, runTarget } from '@/features/runs/testFixtures';
import type { Run } from '@/features/runs/api';
import type { GridOutput, GridPage, GridRow, GridScore, Scorer } from './api';

export const ME = { id: 5, email: 'rev@example.com', name: 'Rev', created_at: '2024-01-01T00:00:00Z' };
export const TARGET_IDS = [11, 12, 13, 14];
export const MANUAL = { scorerId: 30, versionId: 31 };

export function gridRun(over: Partial<Run> = {}): Run {
  return makeRun({
    status: 'completed',
    targets: TARGET_IDS.map((id, i) => runTarget({ id, label: `Model ${String.fromCharCode(65 + i)}` })),
    scorers: [{ scorer_version_id: MANUAL.versionId, scorer_id: MANUAL.scorerId, name: 'Helpfulness', kind: 'manual', version: 1 }],
    ...over,
  });
}

type Manual = Extract<Scorer, { kind: 'manual' }>;
type Scale = NonNullable<Manual['latest']['params']['scale']>;

export function manualScorer(scale: Scale = '1-5'): Manual & { versions: Manual['latest'][] } {
  const latest = { id: MANUAL.versionId, scorer_id: MANUAL.scorerId, number: 1, params: { scale }, note: null, created_by: null, created_at: '2024-01-01T00:00:00Z' };
  return { id: MANUAL.scorerId, row_version: 1, name: 'Helpfulness', kind: 'manual', description: null, archived_at: null, created_at: latest.created_at, latest, versions: [latest] };
}

/** Output id of case `c` (0-based) and target index `t`. */
export const outputId = (c: number, t: number) => 1000 + c * 10 + t;

export interface GridState {
  rows: number; // cases
  run: Run;
  scale: Scale;
  role: string;
  /** output id -> the reviewer's manual score as entered */
  manual: Map<number, { rating: number | null; passed: boolean | null }>;
  /** output id -> its row_version (1 when not set) */
  versions?: Map<number, number>;
  noScorers?: boolean;
}

function output(c: number, t: number, state: GridState): GridOutput {
  const id = outputId(c, t);
  const failed = t === 3 && c % 5 === 1;
  const scores: GridScore[] = failed
    ? []
    : [
        { id: id * 10, scorer_version_id: 21, scorer_id: 20, scorer_name: 'Judge', version: 1, kind: 'llm_judge', source: 'fake-judge', value: (c % 4) / 4, passed: c % 4 >= 2, rationale: `Rationale for case ${c + 1} on target ${t}`, comment: null, error: null, author_id: null, rating: null, row_version: 1 },
      ];
  const mine = state.manual.get(id);
  if (mine) {
    scores.push({ id: id * 10 + 1, scorer_version_id: MANUAL.versionId, scorer_id: MANUAL.scorerId, scorer_name: 'Helpfulness', version: 1, kind: 'manual', source: `user:${ME.id}`, value: mine.rating != null ? (mine.rating - 1) / 4 : mine.passed ? 1 : 0, passed: mine.passed, rationale: '', comment: null, error: null, author_id: ME.id, rating: mine.rating, row_version: state.versions?.get(id) ?? 1 });
  }
  return {
    id, repeat: 0, turn: 0, prompt: null, status: failed ? 'failed' : 'succeeded', text: failed ? null : `Answer ${c + 1} from ${t}`, text_length: 12,
    error_class: failed ? 'timeout' : null, error: failed ? 'no reply in 30 s' : null, tokens_in: 10, tokens_out: 5, cost_micros: 120, latency_ms: 300 + c, cached: false, scores, retrieved: null,
  };
}

export function gridRows(state: GridState, offset: number, limit: number, targets: number[]): GridRow[] {
  const rows: GridRow[] = [];
  for (let c = offset; c < Math.min(state.rows, offset + limit); c++) {
    rows.push({
      case_id: 500 + c, position: c, number: c + 1, input: `Question ${c + 1}?`, turns: 1, tags: c % 2 ? ['odd'] : [],
      cells: targets.map((id) => ({ target_id: id, outputs: [output(c, TARGET_IDS.indexOf(id), state)] })),
    });
  }
  return rows;
}

/** The API of a finished run with `rows` cases x 4 targets, a reviewer, a manual scorer. */
export function serveGrid(state: GridState) {
  return mockFetch(async (req) => {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === '/api/auth/me') return json(ME);
    if (path === '/api/projects/3') return json(project(state.role));
    if (path === '/api/projects/3/runs/7') return json(state.run);
    if (path === '/api/projects/3/scorers') return json({ items: state.noScorers ? [] : [manualScorer(state.scale)], total: state.noScorers ? 0 : 1, page: 1, page_size: 100 });
    if (path === `/api/projects/3/scorers/${MANUAL.scorerId}`) return json(manualScorer(state.scale));
    if (path === '/api/projects/3/runs/7/grid') {
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const listed = url.searchParams.get('target_ids');
      const targets = listed ? listed.split(',').map(Number) : TARGET_IDS;
      let total = state.rows;
      let rows = gridRows(state, offset, limit, targets);
      if (url.searchParams.get('error_class') === 'timeout') {
        // cases 2, 7, 12, ... (every fifth, from the second) failed on the fourth target
        const all = gridRows(state, 0, state.rows, targets).filter((r) => r.cells.some((c) => c.outputs[0].error_class === 'timeout'));
        total = all.length;
        rows = all.slice(offset, offset + limit);
      }
      const page: GridPage = {
        total, offset, limit, rows,
        targets: targets.map((id) => ({ target_id: id, label: `Model ${String.fromCharCode(65 + TARGET_IDS.indexOf(id))}`, model_id: 5 })),
      };
      return json(page);
    }
    const score = /^\/api\/projects\/3\/runs\/7\/outputs\/(\d+)\/scores\/(\d+)$/.exec(path);
    if (score) {
      const id = Number(score[1]);
      if (req.method === 'PUT') {
        const body = (await req.json()) as { rating?: number | null; passed?: boolean | null };
        const had = state.manual.get(id);
        const stored = had ? (state.versions?.get(id) ?? 1) : 0;
        const sent = req.headers.get('If-Match');
        if (sent !== null && sent !== `"${stored}"`) return json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: null, current_version: stored }, 412);
        state.manual.set(id, { rating: body.rating ?? null, passed: body.passed ?? null });
        (state.versions ??= new Map()).set(id, stored + 1);
        return json({ id: 1, scorer_version_id: MANUAL.versionId, row_version: stored + 1 });
      }
      if (req.method === 'DELETE') {
        const had = state.manual.get(id);
        const sent = req.headers.get('If-Match');
        const stored = state.versions?.get(id) ?? 1;
        if (had && sent !== null && sent !== `"${stored}"`) return json({ code: 'STALE_WRITE', status: 412, message: 'Changed', errors: {}, current: null, current_version: stored }, 412);
        state.manual.delete(id);
        state.versions?.delete(id);
        return json(null, 204);
      }
    }
    const one = /^\/api\/projects\/3\/runs\/7\/outputs\/(\d+)$/.exec(path);
    if (one) {
      const id = Number(one[1]);
      return json({
        id, case_id: 500, target_id: 11, model_id: 5, label: 'Model A', repeat: 0, turn: 0, status: 'succeeded', text: `Full text of output ${id}`, error_class: null, error: null,
        latency_ms: 300, ttft_ms: null, tokens_in: 10, tokens_out: 5, cost_micros: 120, cached: false, attempts: 1, raw_request: {}, raw_response: {},
        case_input: { question: `Full question of output ${id}` }, case_expected: null, finished_at: null, scores: [],
      });
    }
    return json({ code: 'NOT_FOUND', status: 404, message: 'Not found', errors: {} }, 404);
  });
}

/**
 * jsdom has no layout: scrolling an element sets its offsets and fires scroll, as a browser
 * would, and a scroll container's content size is its first child's styled size (the
 * virtualised grid sets it), in a viewport of 1100 x 576.
 */
export function installScrollTo() {
  const size = (el: Element, axis: 'height' | 'width') => {
    const child = el.firstElementChild as HTMLElement | null;
    return child ? parseFloat(child.style[axis]) || 0 : 0;
  };
  Object.defineProperty(HTMLElement.prototype, 'scrollHeight', { configurable: true, get(this: HTMLElement) { return size(this, 'height'); } });
  Object.defineProperty(HTMLElement.prototype, 'scrollWidth', { configurable: true, get(this: HTMLElement) { return size(this, 'width'); } });
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get(this: HTMLElement) { return this.dataset.testid === 'grid-scroll' ? 576 : 0; } });
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', { configurable: true, get(this: HTMLElement) { return this.dataset.testid === 'grid-scroll' ? 1100 : 0; } });
  Element.prototype.scrollTo = function scrollTo(this: Element, a?: ScrollToOptions | number, b?: number) {
    const opts: ScrollToOptions = typeof a === 'object' ? a : { left: a, top: b };
    if (opts.top !== undefined) this.scrollTop = opts.top;
    if (opts.left !== undefined) this.scrollLeft = opts.left;
    this.dispatchEvent(new Event('scroll'));
  } as Element['scrollTo'];
}
