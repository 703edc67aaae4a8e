import { useSearchParams } from 'react-router-dom';

/** An id kept in the address (`?name=7`), so a report's choice can be shared; null when absent. */
export function useIdParam(name: string): [number | null, (id: number | null) => void] {
  const [params, setParams] = useSearchParams();
  const raw = params.get(name);
  const set = (id: number | null) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      if (id === null) next.delete(name);
      else next.set(name, String(id));
      return next;
    });
  return [raw ? Number(raw) : null, set];
}
