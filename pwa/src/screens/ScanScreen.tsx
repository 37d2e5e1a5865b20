import { useEffect, useRef, useState } from 'preact/hooks';
import { parsePairingLink } from '../../../shared/pairing/pairingLink.ts';
import { decodeQr } from '../qr/decodeQr.ts';
import { navigate } from '../router.ts';

interface Detector {
  detect(source: HTMLVideoElement | ImageData): Promise<{ rawValue: string }[]>;
}
declare const BarcodeDetector: (new (options: { formats: string[] }) => Detector) | undefined;

/**
 * A detector: the platform's BarcodeDetector where there is one, else Latch's decoder. The
 * decoder is part of the app, not a lazy chunk: the service worker precaches every file at
 * install anyway, and a chunk of its own cost 0.9 KB gzipped more (Vite's preload helper, a
 * second file's compression, its precache entry).
 */
function qrDetector(): (video: HTMLVideoElement, canvas: HTMLCanvasElement) => Promise<string | undefined> {
  if (typeof BarcodeDetector !== 'undefined') {
    const detector = new BarcodeDetector({ formats: ['qr_code'] });
    return async (video) => (await detector.detect(video))[0]?.rawValue;
  }
  return async (video, canvas) => {
    if (video.videoWidth === 0) return undefined;
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const context = canvas.getContext('2d', { willReadFrequently: true })!;
    context.drawImage(video, 0, 0);
    return decodeQr(context.getImageData(0, 0, canvas.width, canvas.height));
  };
}

/** The in-app scanner, for a phone already paired that adds another host (or when the camera app is not at hand). */
export function ScanScreen() {
  const video = useRef<HTMLVideoElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [message, setMessage] = useState('Point the camera at the code latch pair shows.');

  useEffect(() => {
    let stream: MediaStream | undefined;
    let stopped = false;
    void (async () => {
      try {
        stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' } });
      } catch {
        return setMessage('The camera is not available. Open the link latch pair prints instead.');
      }
      // Left while the camera was being asked for: it is let go at once, not kept on.
      if (stopped) return stream.getTracks().forEach((track) => track.stop());
      video.current!.srcObject = stream;
      await video.current!.play();
      const detect = qrDetector();
      while (!stopped) {
        // A frame that cannot be read (no video size yet, a detector that throws) is skipped,
        // never the end of scanning.
        const text = await detect(video.current!, canvas.current!).catch(() => undefined);
        if (text && parsePairingLink(text).ok) {
          const url = new URL(text);
          if (url.origin !== location.origin)
            return setMessage('This code is for another relay. Open its link instead.');
          navigate(`/pair${url.hash}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    return () => {
      stopped = true;
      stream?.getTracks().forEach((track) => track.stop());
    };
  }, []);

  return (
    <main class="screen">
      <h1>Scan a pairing code</h1>
      <video ref={video} class="scanner" muted playsInline aria-label="camera" />
      <canvas ref={canvas} hidden />
      <p role="status">{message}</p>
      <button type="button" onClick={() => navigate('/')}>
        Cancel
      </button>
    </main>
  );
}
