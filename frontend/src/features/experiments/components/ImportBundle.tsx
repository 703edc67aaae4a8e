import { useRef, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Alert, Button } from '@/components/ui';
import { errorMessage } from '@/api/errors';
import { experimentsPath, request, type Experiment } from '../api';
import { expKeys } from '../hooks/useExperiments';

/** Imports an exported bundle (zip) as a new draft experiment and opens it. */
export function ImportBundle({ projectId }: { projectId: number }) {
  const input = useRef<HTMLInputElement>(null);
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const upload = useMutation({
    mutationFn: (file: File) => {
      const fd = new FormData();
      fd.append('file', file);
      return request<Experiment>('POST', `${experimentsPath(projectId)}/import`, { body: fd });
    },
    onSuccess: (e) => {
      void qc.invalidateQueries({ queryKey: expKeys.all(projectId) });
      navigate(`/projects/${projectId}/experiments/${e.id}${e.status === 'draft' ? '/edit' : ''}`);
    },
    onError: (e) => setError(errorMessage(e)),
  });
  return (
    <div className="space-y-2">
      <input
        ref={input}
        type="file"
        accept=".zip,application/zip"
        className="sr-only"
        aria-label="Bundle file"
        tabIndex={-1}
        onChange={(e) => {
          const f = e.target.files?.[0];
          setError(null);
          if (f) upload.mutate(f);
          e.target.value = '';
        }}
      />
      <Button variant="secondary" loading={upload.isPending} onClick={() => input.current?.click()}>
        Import bundle
      </Button>
      {error && <Alert>{error}</Alert>}
    </div>
  );
}
