import { useRef, useState } from 'preact/hooks';

const HOLD_MS = 600;

/**
 * The panic button: big and red, fired by holding it (pointer, or Space/Enter) for 600 ms, so a
 * brush or a stray tap cannot freeze the fleet, and a deliberate press cannot miss.
 */
export function PanicButton({
  onFire,
  disabled,
  why,
}: {
  onFire: () => void;
  disabled: boolean;
  /** Why there is nothing to freeze, said in place of "hold to freeze every agent". */
  why: string | undefined;
}) {
  const [holding, setHolding] = useState(false);
  const timer = useRef<number | undefined>(undefined);

  const start = () => {
    if (disabled || timer.current !== undefined) return;
    setHolding(true);
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      setHolding(false);
      onFire();
    }, HOLD_MS);
  };
  const cancel = () => {
    window.clearTimeout(timer.current);
    timer.current = undefined;
    setHolding(false);
  };

  return (
    <button
      type="button"
      class={`panic${holding ? ' holding' : ''}`}
      disabled={disabled}
      onPointerDown={(event) => {
        event.currentTarget.setPointerCapture(event.pointerId);
        start();
      }}
      onPointerUp={cancel}
      onPointerCancel={cancel}
      onPointerLeave={cancel}
      onContextMenu={(event) => event.preventDefault()}
      onKeyDown={(event) => {
        if (event.key === ' ' || event.key === 'Enter') {
          event.preventDefault();
          if (!event.repeat) start();
        }
      }}
      onKeyUp={(event) => {
        if (event.key === ' ' || event.key === 'Enter') cancel();
      }}
    >
      {/* Its name is what it shows ("Panic, hold to freeze every agent"), as WCAG 2.5.3 asks. */}
      <span class="panic-label">Panic</span>{' '}
      <span class="panic-hint">{why ?? (holding ? 'keep holding…' : 'hold to freeze every agent')}</span>
    </button>
  );
}
