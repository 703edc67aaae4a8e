import { useState } from 'react';
import { Button, Input } from '@/components/ui';
import type { InputProps } from '@/components/ui/Input';

/** A password input with a show/hide toggle ("Show password", "Hide password"). */
export function PasswordInput({ toggleLabel = 'password', ...props }: InputProps & { toggleLabel?: string }) {
  const [visible, setVisible] = useState(false);
  return (
    <div className="relative">
      <Input {...props} type={visible ? 'text' : 'password'} className="pr-20" />
      <Button
        variant="ghost"
        size="sm"
        className="absolute right-1 top-1"
        aria-pressed={visible}
        aria-label={`${visible ? 'Hide' : 'Show'} ${toggleLabel}`}
        onClick={() => setVisible((v) => !v)}
      >
        {visible ? 'Hide' : 'Show'}
      </Button>
    </div>
  );
}
