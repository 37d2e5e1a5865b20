import { render } from 'preact';
import { App } from './App.tsx';
import { followScreenHeadings } from './screenHeading.ts';
import './styles/index.css';

const root = document.getElementById('app')!;
render(<App />, root);
followScreenHeadings(root);
