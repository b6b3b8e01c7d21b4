import '@copilotkit/react-core/v2/styles.css';
import './app.css';
import { createRoot } from 'react-dom/client';
import { App, readSettings } from './app.js';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root element');
createRoot(root).render(<App settings={readSettings(window.location, window.history)} />);
