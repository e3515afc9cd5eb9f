/**
 * The dashboard's one stylesheet, served at `/dashboard/app.css` and allowed by the policy as
 * `style-src 'self'`: cached once by the browser rather than sent with every page. Colours at
 * 4.5:1 or more. On a phone (up to 40rem) nothing scrolls sideways (CONTRACT §11): the menu folds
 * behind a Menu button, each table row becomes a card of labelled cells, and long ids wrap; on a
 * wider screen a wide table scrolls inside its own focusable box. The chart is drawn twice
 * (views/overview.ts) and the drawing that keeps its text at 11 px or more is shown.
 */
export const DASHBOARD_CSS = `
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:#f3f5f9;color:#1a1f36;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
a{color:#1d4ed8}
header{background:#1a1f36;color:#fff}
.top{max-width:72rem;margin:0 auto;padding:.5rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem}
.brand{font-weight:700;margin-right:auto;color:#fff;text-decoration:none;display:inline-flex;align-items:center;min-height:2.75rem}
.who{font-size:.8125rem;color:#d5dbe8;overflow-wrap:anywhere}
nav ul{list-style:none;margin:0;padding:.25rem 1rem .5rem;display:flex;flex-wrap:wrap;gap:.25rem .5rem;max-width:72rem;margin:0 auto}
nav a{display:inline-flex;align-items:center;color:#fff;text-decoration:none;padding:.375rem .75rem;border-radius:.375rem;min-height:2.75rem}
nav a[aria-current=page]{background:#3b4a7a}
nav a:hover,nav a:focus-visible{background:#2d3a63}
.signout{margin:0}
.signout button{background:transparent;color:#fff;border:1px solid #8190b8;border-radius:.375rem;padding:.25rem .75rem;font:inherit;cursor:pointer;min-height:2.75rem}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.375rem;margin:.25rem 0 1rem}
h2{font-size:1.0625rem;margin:1.5rem 0 .5rem}
.card{background:#fff;border-radius:.75rem;padding:1rem;box-shadow:0 1px 2px rgba(26,31,54,.12);margin-bottom:1rem}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.75rem;margin-bottom:1rem}
.stat{background:#fff;border-radius:.75rem;padding:.75rem 1rem;box-shadow:0 1px 2px rgba(26,31,54,.12)}
.stat p{margin:0;color:#4a5568;font-size:.8125rem}
.stat strong{display:block;font-size:1.25rem;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;background:#fff;border-radius:.75rem;box-shadow:0 1px 2px rgba(26,31,54,.12);margin-bottom:1rem}
.scroll:focus-visible{outline:3px solid #1d4ed8}
table{border-collapse:collapse;width:100%;font-size:.875rem}
th,td{text-align:left;padding:.5rem .75rem;border-bottom:1px solid #e3e8f0;white-space:nowrap;vertical-align:top}
th{background:#f8fafc;color:#344054;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;padding:.5rem .75rem;font-weight:600}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.8125rem}
.status{display:inline-block;padding:0 .5rem;border-radius:1rem;font-size:.75rem;font-weight:600}
.s-SUCCESS,.s-delivered{background:#dcfce7;color:#14532d}
.s-FAILED,.s-failed{background:#fee2e2;color:#7f1d1d}
.s-PENDING,.s-PROCESSING,.s-pending{background:#fef3c7;color:#713f12}
.reason{display:block;max-width:18rem;white-space:normal;overflow-wrap:anywhere;font-size:.75rem;color:#4a5568}
.stats.attention .stat{margin:0}
form.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(9.5rem,1fr));gap:.5rem .75rem;align-items:end}
label{display:block;font-size:.8125rem;color:#344054;font-weight:600}
input,select{display:block;width:100%;margin-top:.25rem;padding:.5rem;border:1px solid #8a94a6;border-radius:.375rem;font:inherit;background:#fff;color:#1a1f36;min-height:2.75rem}
input:focus-visible,select:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
.btn{display:inline-flex;align-items:center;justify-content:center;min-height:2.75rem;padding:.5rem 1rem;border-radius:.375rem;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
.btn.secondary{background:#fff;color:#1d4ed8}
.btn.danger{background:#b91c1c;border-color:#b91c1c}
form.filters .actions{grid-column:1/-1}
details summary{cursor:pointer;padding:.5rem 0;color:#1d4ed8}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0}
.actions form{margin:0}
.inline{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}
.inline label{flex:1 1 12rem}
.pager{display:flex;justify-content:space-between;gap:.5rem;margin:.5rem 0 1rem}
.flash{padding:.75rem 1rem;border-radius:.5rem;margin-bottom:1rem;background:#dbeafe;color:#1e3a8a}
.flash.error{background:#fee2e2;color:#7f1d1d}
.secret{display:block;padding:.75rem;background:#fff7ed;border:1px solid #c2410c;border-radius:.5rem;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
dl.facts{display:grid;grid-template-columns:minmax(8rem,auto) 1fr;gap:.25rem 1rem;margin:0}
dl.facts dt{color:#4a5568}
dl.facts dd{margin:0;overflow-wrap:anywhere}
.chart{width:100%;height:auto;display:block}
.chart.narrow{display:none;max-width:32rem}
.menu{display:none}
.menu summary{list-style:none;display:inline-flex;align-items:center;min-height:2.75rem;padding:.25rem .875rem;border:1px solid #8190b8;border-radius:.375rem;color:#fff;cursor:pointer;font-weight:600}
.menu summary::-webkit-details-marker{display:none}
.menu summary:focus-visible{outline:3px solid #93c5fd;outline-offset:2px}
.menu[open] summary{background:#3b4a7a}
.muted{color:#4a5568}
.signin{max-width:24rem;margin:3rem auto}
.signin label{margin-bottom:.75rem}
.signin .btn{width:100%}
ol.timeline{margin:0;padding-left:1.25rem}
ol.timeline li{margin:.25rem 0}
.btn{overflow-wrap:anywhere}
@media (max-width:50rem){.chart.wide{display:none}.chart.narrow{display:block}}
@media (max-width:40rem){
main{padding:.75rem}
h1{font-size:1.25rem;margin:.25rem 0 .75rem}
.top{position:relative;flex-wrap:nowrap;padding:.25rem .75rem;gap:.5rem}
.who,nav.wide{display:none}
.menu{display:block}
.menu[open] nav{position:absolute;z-index:10;left:0;right:0;top:100%;background:#1a1f36;box-shadow:0 6px 12px rgba(26,31,54,.35)}
.menu ul{display:grid;grid-template-columns:1fr 1fr;gap:.25rem .5rem;padding:.25rem .75rem .75rem}
.menu a{display:flex;min-width:0;overflow-wrap:anywhere}
.menu li.account{grid-column:1/-1}
.card{padding:.75rem}
.scroll{overflow:visible;background:none;box-shadow:none;border-radius:0}
.scroll table,.scroll tbody,.scroll td{display:block}
.scroll thead{display:none}
.scroll tr{display:grid;grid-template-columns:1fr 1fr;grid-auto-flow:row dense;gap:.375rem .75rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 2px rgba(26,31,54,.12);padding:.625rem .75rem;margin-bottom:.5rem}
.scroll td{min-width:0;padding:0;border:0;white-space:normal;overflow-wrap:anywhere}
.scroll td.num{text-align:left}
.scroll td::before{content:attr(data-label);display:block;font-size:.75rem;font-weight:600;color:#4a5568}
.scroll td:has(.mono),.scroll td.mono,.scroll td:has(form){grid-column:1/-1}
.scroll td[data-label=Amount]{order:-2;font-weight:600}
.scroll td[data-label=Status]{order:-1}
.card .scroll tr{box-shadow:none;border:1px solid #e3e8f0}
dl.facts{grid-template-columns:minmax(6.5rem,auto) 1fr;gap:.25rem .75rem}
}
`;
