import type { Case, Dataset } from './api';

export const ts = '2024-01-01T00:00:00Z';

export function dataset(over: Partial<Dataset> = {}): Dataset {
  return { id: 11, row_version: 1, name: 'Capitals', description: 'Geography questions', kind: 'questions', split: null, version: 3, case_count: 2, tags: [], origin: { type: 'manual' }, archived_at: null, created_at: ts, ...over };
}

export function kase(i: number, over: Partial<Case> = {}): Case {
  return { id: 1000 + i, position: i, created_at: ts, input: { question: `Question ${i}` }, expected: { answer: `Answer ${i}` }, tags: ['geo'], difficulty: 'easy', metadata: {}, trace: null, ...over };
}

export const project = (role: string) => ({ id: 3, name: 'Alpha', slug: 'alpha', description: null, role, member_count: 1, created_at: ts, updated_at: ts });

export const apiError = (status: number, code: string, message: string, errors: unknown = {}) => ({ code, status, message, errors });
