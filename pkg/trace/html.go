package trace

// htmlPage is the self-contained page of --html; WriteHTML replaces
// /*DATA*/null with the tree.
const htmlPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>pk trace</title>
<style>
body{font:13px/1.3 "DejaVu Sans Mono",Menlo,Consolas,monospace;margin:0;background:#fdfdf8;color:#222}
header{padding:10px 14px 6px}
h1{font-size:16px;margin:0 0 4px}
#crumbs{margin:4px 0}
#crumbs a{color:#0a5;cursor:pointer;text-decoration:underline}
#info{color:#555;min-height:1.3em;white-space:pre}
#legend{margin:4px 0;font-size:12px}
#legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;vertical-align:-1px}
#chart{position:relative;margin:6px 14px;overflow:hidden}
.box{position:absolute;height:19px;box-sizing:border-box;border-right:1px solid #fdfdf8;border-bottom:1px solid #fdfdf8;
 overflow:hidden;white-space:nowrap;text-overflow:ellipsis;padding:2px 3px;cursor:pointer;border-radius:2px;font-size:12px}
.box:hover{outline:2px solid #333;z-index:2}
button{font:inherit;margin-right:8px}
</style></head><body>
<header><h1 id="title">pk trace</h1>
<div><button id="back" title="Backspace">&larr; back</button><span id="crumbs"></span></div>
<div id="info">click a box to open it; width is bytes in the file</div>
<div id="legend"></div></header>
<div id="chart"></div>
<script>
"use strict";
const D = /*DATA*/null;
const N = D.nodes;
const ROW = 20;
let zoom = 0;
const hist = [];
function human(n){
  if(n<1024) return n+" B";
  const u=["KiB","MiB","GiB","TiB"]; let f=n, i=-1;
  do { f/=1024; i++; } while(f>=1024 && i<u.length-1);
  return f.toFixed(1)+" "+u[i];
}
function colour(code){
  let h=2166136261;
  for(const ch of code){ h^=ch.charCodeAt(0); h=Math.imul(h,16777619)>>>0; }
  if(code==="Pk"||code==="File") return "rgb(180,180,190)";
  return "rgb("+(205+h%50)+","+(80+(h>>>8)%130)+","+(40+(h>>>16)%60)+")";
}
function legend(){
  const el=document.getElementById("legend");
  for(const [c,w] of (D.legend||[])){
    const sw=document.createElement("span"); sw.style.background=colour(c);
    el.appendChild(sw); el.appendChild(document.createTextNode(c+(w?" "+w:"")));
  }
}
function pct(n){ return D.total>0 ? (100*n/D.total).toFixed(1)+"%" : "100%"; }
function render(){
  const chart=document.getElementById("chart");
  chart.textContent="";
  const W=chart.clientWidth||1000;
  const root=N[zoom];
  const scale=root.s>0 ? W/root.s : 0;
  let boxes=0, maxDepth=0;
  const stack=[[zoom,0,0]];
  while(stack.length){
    const [i,x,d]=stack.pop();
    const n=N[i], w=n.s*scale;
    if(w<1 && i!==zoom) continue;
    const el=document.createElement("div");
    el.className="box";
    el.style.left=x+"px"; el.style.top=(d*ROW)+"px"; el.style.width=Math.max(w,1)+"px";
    el.style.background=colour(n.c);
    el.textContent=n.c+" "+n.l+" "+human(n.s);
    el.title=n.c+" "+n.l+"\n"+n.p+"\n"+human(n.s)+" ("+n.s+" B), "+pct(n.s)+" of the file, self "+n.f+" B";
    el.dataset.i=i; el.dataset.path=n.p;
    el.addEventListener("click",()=>open(i));
    el.addEventListener("mouseenter",()=>{document.getElementById("info").textContent=el.title.replace(/\n/g,"   ");});
    chart.appendChild(el);
    boxes++; maxDepth=Math.max(maxDepth,d);
    let cx=x; const next=[];
    for(const k of (n.k||[])){ next.push([k,cx,d+1]); cx+=N[k].s*scale; }
    for(let j=next.length-1;j>=0;j--) stack.push(next[j]);
  }
  chart.style.height=((maxDepth+1)*ROW+4)+"px";
  crumbs();
  let m=document.getElementById("pk-rendered");
  if(!m){ m=document.createElement("div"); m.id="pk-rendered"; m.hidden=true; document.body.appendChild(m); }
  m.dataset.boxes=boxes; m.dataset.zoom=N[zoom].p;
  return boxes;
}
function crumbs(){
  const c=document.getElementById("crumbs");
  c.textContent="";
  const chain=hist.concat([zoom]);
  chain.forEach((i,j)=>{
    if(j) c.appendChild(document.createTextNode(" › "));
    const a=document.createElement(j===chain.length-1?"b":"a");
    a.textContent=(N[i].p||N[i].l||"file")+" ("+human(N[i].s)+")";
    if(j<chain.length-1) a.addEventListener("click",()=>{ zoom=i; hist.length=j; render(); });
    c.appendChild(a);
  });
}
function open(i){ if(i===zoom) return; hist.push(zoom); zoom=i; render(); }
function back(){ if(hist.length){ zoom=hist.pop(); render(); } }
document.getElementById("back").addEventListener("click",back);
document.addEventListener("keydown",e=>{ if(e.key==="Backspace"||e.key==="Escape"){ e.preventDefault(); back(); } });
document.getElementById("title").textContent="pk trace: "+D.file+"  "+human(D.total)+" ("+D.total+" bytes)";
legend();
render();
window.addEventListener("resize",render);
if(location.hash==="#selftest"){
  const out=document.createElement("div"); out.id="pk-selftest";
  try{
    const kids=(N[0].k||[]).slice().sort((a,b)=>N[b].s-N[a].s);
    if(!kids.length) throw new Error("nothing to open");
    const target=kids[0];
    const box=[...document.querySelectorAll(".box")].find(b=>+b.dataset.i===target);
    if(!box) throw new Error("no box for the largest child");
    box.dispatchEvent(new MouseEvent("click",{bubbles:true}));
    const zoomed=document.getElementById("pk-rendered").dataset.zoom;
    const first=document.querySelector(".box");
    if(zoomed!==N[target].p || +first.dataset.i!==target) throw new Error("click did not zoom: "+zoomed);
    const w=parseFloat(first.style.width);
    back();
    const after=document.getElementById("pk-rendered").dataset.zoom;
    if(after!==N[0].p) throw new Error("back did not return: "+after);
    out.textContent="selftest ok: zoomed to "+N[target].p+" (width "+Math.round(w)+"px) and back";
  }catch(e){ out.textContent="selftest FAILED: "+e.message; }
  document.body.appendChild(out);
}
</script></body></html>
`
