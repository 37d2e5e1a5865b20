import { OfflineBanner } from './components/OfflineBanner.tsx';
import { UpdatePrompt } from './components/UpdatePrompt.tsx';
import { useRoute } from './router.ts';
import { DevicesScreen } from './screens/DevicesScreen.tsx';
import { HomeScreen } from './screens/HomeScreen.tsx';
import { PairScreen } from './screens/PairScreen.tsx';
import { RequestScreen } from './screens/RequestScreen.tsx';
import { ScanScreen } from './screens/ScanScreen.tsx';

export function App() {
  const route = useRoute();
  return (
    <>
      <UpdatePrompt />
      <OfflineBanner />
      {route.name === 'pair' && <PairScreen />}
      {route.name === 'scan' && <ScanScreen />}
      {route.name === 'devices' && <DevicesScreen />}
      {route.name === 'request' && (
        <RequestScreen key={route.requestId} fleet={route.fleet} requestId={route.requestId} />
      )}
      {route.name === 'home' && <HomeScreen />}
    </>
  );
}
