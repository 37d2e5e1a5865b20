import { render } from 'preact';
import { App } from './App.tsx';
import './styles.css';

render(<App />, document.getElementById('app')!);
